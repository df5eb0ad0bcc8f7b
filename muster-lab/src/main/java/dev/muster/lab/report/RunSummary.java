package dev.muster.lab.report;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code output.txt} read back: the run's time and parameters from its first two lines, then one {@link Row} per
 * scenario block (the format {@code OutputTable} writes). Lines it does not recognise are ignored; the report also
 * shows the file verbatim when no row could be read.
 */
record RunSummary(String time, String parameters, List<Row> rows) {
  private static final Pattern HEADER = Pattern.compile("^Muster lab, (.*)$");
  private static final Pattern PARAMETERS = Pattern.compile("^parameters: (.*)$");
  private static final Pattern RESULT = Pattern.compile("^(\\S+)\\s+(PASS|FAIL)\\s+([0-9.]+)s\\s+ours: (.*)$");
  private static final Pattern SEED = Pattern.compile("^\\s+seed: (.*)$");
  private static final Pattern INVARIANT = Pattern.compile("^\\s+invariant: (.*)$");

  /** One scenario's block: result, seconds it took, our figures, the seed's, and the invariant checked. */
  record Row(String scenario, boolean passed, String took, String ours, String seed, String invariant) {
    Row with(String newSeed, String newInvariant) {
      return new Row(scenario, passed, took, ours, newSeed, newInvariant);
    }
  }

  RunSummary {
    rows = List.copyOf(rows);
  }

  long passed() {
    return rows.stream().filter(Row::passed).count();
  }

  static RunSummary parse(String outputTxt) {
    String time = "";
    String parameters = "";
    List<Row> rows = new ArrayList<>();
    for (String line : outputTxt.split("\\R")) {
      Matcher m;
      if ((m = HEADER.matcher(line)).matches()) {
        time = m.group(1);
      } else if ((m = PARAMETERS.matcher(line)).matches()) {
        parameters = m.group(1);
      } else if ((m = RESULT.matcher(line)).matches()) {
        rows.add(new Row(m.group(1), m.group(2).equals("PASS"), m.group(3), m.group(4), "", ""));
      } else if (!rows.isEmpty() && (m = SEED.matcher(line)).matches()) {
        Row last = rows.remove(rows.size() - 1);
        rows.add(last.with(m.group(1), last.invariant()));
      } else if (!rows.isEmpty() && (m = INVARIANT.matcher(line)).matches()) {
        Row last = rows.remove(rows.size() - 1);
        rows.add(last.with(last.seed(), m.group(1)));
      }
    }
    return new RunSummary(time, parameters, rows);
  }
}
