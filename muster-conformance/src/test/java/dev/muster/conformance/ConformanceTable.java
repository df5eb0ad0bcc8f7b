package dev.muster.conformance;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The conformance table of docs/adapters/README.md (between {@code <!-- conformance:begin -->} and
 * {@code <!-- conformance:end -->}): a row per scenario, a column per adapter; {@code ✓} is a guarantee the suite
 * asserts for that adapter, {@code –} followed by a reason is one the adapter does not apply. The suite reads the
 * expected cells from it (so the table cannot claim what is not tested) and writes what it saw to
 * {@code target/conformance/}.
 */
final class ConformanceTable {
  static final String FORGED = "a record forged under a signed provider's prefix is never used";
  static final String MAX_STALE = "etcd down past maxStale with FAIL_CLOSED: new calls refused";
  static final String PROBE = "a provider alive but failing its health probe gets no calls";
  static final String STARTING = "STARTING gets no calls until UP";
  static final String DRAINING = "DRAINING gets no new calls";
  static final String SIGKILL = "a SIGKILLed provider: no failed call, gone after its lease";
  static final String SLOW_START = "slow start after recovery: a smaller share at first";
  static final List<String> ROWS = List.of(FORGED, MAX_STALE, PROBE, STARTING, DRAINING, SIGKILL, SLOW_START);
  static final List<String> COLUMNS = List.of("MusterClient", "gRPC channel", "Spring DiscoveryClient",
      "Spring LoadBalancer", "muster dns", "console");

  private ConformanceTable() {}

  /** The table's cells, by row then column. */
  static Map<String, Map<String, String>> documented() {
    Path file = Path.of(System.getProperty("muster.conformance.table", "../docs/adapters/README.md"));
    List<String> lines;
    try {
      lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file.toAbsolutePath(), e);
    }
    int begin = -1;
    int end = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("<!-- conformance:begin")) {
        begin = i;
      } else if (lines.get(i).startsWith("<!-- conformance:end")) {
        end = i;
      }
    }
    if (begin < 0 || end < begin) {
      throw new AssertionError(file + " has no <!-- conformance:begin --> ... <!-- conformance:end --> table");
    }
    List<String> header = cells(lines.get(begin + 1));
    Map<String, Map<String, String>> table = new LinkedHashMap<>();
    for (int i = begin + 3; i < end; i++) {
      List<String> c = cells(lines.get(i));
      Map<String, String> row = new LinkedHashMap<>();
      for (int j = 1; j < c.size() && j < header.size(); j++) {
        row.put(header.get(j), c.get(j));
      }
      table.put(c.get(0), row);
    }
    return table;
  }

  /** True when the table says {@code column} guarantees {@code row} ({@code ✓}); false for {@code –}. */
  static boolean expected(String row, String column) {
    String cell = documented().getOrDefault(row, Map.of()).get(column);
    if (cell == null) {
      throw new AssertionError("docs/adapters/README.md's conformance table has no cell for (" + row + ", " + column
          + ")");
    }
    return cell.startsWith("✓");
  }

  /** Appends one observed cell to {@code target/conformance/results.tsv}: row, column, verdict, detail. */
  static synchronized void record(String row, String column, String verdict, String detail) {
    Path out = Path.of("target", "conformance", "results.tsv");
    try {
      Files.createDirectories(out.getParent());
      Files.writeString(out, row + "\t" + column + "\t" + verdict + "\t" + detail.replace('\n', ' ') + "\n",
          StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    System.out.printf("[conformance] %-62s %-24s %s %s%n", row, column, verdict, detail);
  }

  private static List<String> cells(String line) {
    List<String> out = new ArrayList<>();
    String s = line.trim();
    if (s.startsWith("|")) {
      s = s.substring(1);
    }
    if (s.endsWith("|")) {
      s = s.substring(0, s.length() - 1);
    }
    for (String c : s.split("\\|", -1)) {
      out.add(c.trim());
    }
    return out;
  }
}
