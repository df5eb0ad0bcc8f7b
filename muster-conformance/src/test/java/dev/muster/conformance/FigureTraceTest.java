package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every measured figure in README and docs/ that names the committed output it comes from is in that output
 * (docs/design-release.md §4). A block (a paragraph, a list item, a table row) that links a committed output
 * ({@code .txt}, {@code .tsv}, {@code .csv}, {@code .json}) is held to it: each figure with a unit ({@code ms},
 * {@code s}, {@code %}, bytes), both ends of a range and both numbers of "N of M" must appear in one of the outputs
 * the block links, as written, or as the output's more precise number rounded, or (a figure in seconds) as an
 * output's figure in ms rounded. Settings and derived figures are written in code spans, which, like link targets,
 * hold no figures.
 */
class FigureTraceTest {
  private static final Path ROOT = DocPages.ROOT;
  /** A number that is not part of a word, a version, a path or a range's end. */
  private static final String NUM = "(?<![\\w.,/–-])(\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.(\\d+))?";
  private static final String RANGE_END = "(\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.(\\d+))?";
  private static final String UNIT = "\\s?(ms|s|us|µs|%|B|KiB|kB|KB|MiB|MB|GiB|GB)(?!\\w)";
  private static final Pattern FIGURE = Pattern.compile(NUM + UNIT);
  private static final Pattern RANGE = Pattern.compile(NUM + "\\s?[–-]\\s?" + RANGE_END + UNIT);
  private static final Pattern OF = Pattern.compile(NUM + " of " + NUM + "(?![\\w.])");
  private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s#]+)(?:#[^)]*)?\\)");
  private static final Pattern ANY_NUMBER = Pattern.compile("(?<!\\d)(\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.(\\d+))?");
  private static final Pattern MILLIS = Pattern.compile("(?<![\\d.])(\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.(\\d+))?\\s?ms"
      + "(?![a-zA-Z])");
  private static final Pattern OUTPUT = Pattern.compile(".*\\.(txt|tsv|csv|json)$");
  /** Per page, how many figures with a unit it holds in blocks that link no output; see the test that reads it. */
  static final String LEDGER = "muster-conformance/src/test/resources/figures-unlinked.tsv";
  private static final String REWRITE = "mvn -pl muster-conformance test -Dtest=FigureTraceTest"
      + " -Dmuster.docs.write=true";
  private static final String LEDGER_HEADER = "# Per page, its figures with a unit in blocks that link no committed"
      + " output (FigureTraceTest,\n# docs/design-release.md §4). A count may only go down. Rewritten by\n# "
      + REWRITE + "\n";

  /** A figure as written: its number without thousands separators, and its unit (null for "N of M"). */
  record Figure(String number, String unit) {}

  /** What the outputs a block links hold: every number, and every number written with ms. */
  record Outputs(Set<String> numbers, Set<BigDecimal> millis) {
    static Outputs of(List<String> texts) {
      Set<String> numbers = new HashSet<>();
      Set<BigDecimal> millis = new HashSet<>();
      for (String text : texts) {
        Matcher n = ANY_NUMBER.matcher(text);
        while (n.find()) {
          numbers.add(number(n.group(1), n.group(2)));
        }
        Matcher m = MILLIS.matcher(text);
        while (m.find()) {
          millis.add(new BigDecimal(number(m.group(1), m.group(2))));
        }
      }
      return new Outputs(numbers, millis);
    }
  }

  @Test
  void everyFigureInABlockThatLinksAnOutputIsInThatOutput() throws IOException {
    List<String> missing = new ArrayList<>();
    int checked = 0;
    for (Path page : DocPages.all()) {
      for (String block : blocks(Files.readString(page))) {
        List<Path> linked = outputsLinked(page, block);
        if (linked.isEmpty()) {
          continue;
        }
        List<String> texts = new ArrayList<>();
        for (Path o : linked) {
          texts.add(Files.readString(o));
        }
        Outputs outputs = Outputs.of(texts);
        for (Figure figure : figures(withoutCodeAndLinks(block))) {
          checked++;
          if (!traced(figure, outputs)) {
            missing.add(ROOT.relativize(page) + ": " + figure.number() + (figure.unit() == null ? "" : " "
                + figure.unit()) + " is not in " + linked.stream().map(o -> ROOT.relativize(o).toString()).toList()
                + " (" + firstLine(block) + ")");
          }
        }
      }
    }
    assertThat(checked).as("figures checked").isGreaterThan(100);
    assertThat(missing).as("figures not in the output their block links").isEmpty();
  }

  /**
   * The README's figures are its headline figures: each is in a block that links its output, and a setting is
   * written in words or as code ("five seconds", {@code --ttl 3s}), so that every figure there is checked above.
   */
  @Test
  void everyFigureInTheReadmeIsInABlockThatLinksAnOutput() throws IOException {
    Path readme = ROOT.resolve("README.md");
    List<String> unlinked = new ArrayList<>();
    for (String block : blocks(Files.readString(readme))) {
      List<Figure> figures = figures(withoutCodeAndLinks(block));
      if (!figures.isEmpty() && outputsLinked(readme, block).isEmpty()) {
        unlinked.add(figures + " in: " + firstLine(block));
      }
    }
    assertThat(unlinked).as("README figures in a block that links no output").isEmpty();
  }

  /**
   * A figure in a block that links no output is not checked above, and no rule tells a measurement from a setting
   * by its shape. Outside the README, how many such figures each page holds is kept in {@link #LEDGER}, and may only
   * go down: a page with more fails, naming the blocks (link the output a measurement comes from; write a setting
   * or a derived figure as code or in words), and a page with fewer fails until its line is lowered. {@code
   * -Dmuster.docs.write=true} rewrites the ledger from the pages.
   */
  @Test
  void figuresInBlocksThatLinkNoOutputOnlyGoDown() throws IOException {
    Map<String, List<String>> unlinked = new TreeMap<>();
    for (Path page : DocPages.all()) {
      if (page.equals(ROOT.resolve("README.md"))) {
        continue; // held to none, above
      }
      for (String block : blocks(Files.readString(page))) {
        List<Figure> figures = figures(withoutCodeAndLinks(block)).stream().filter(f -> f.unit() != null).toList();
        if (!figures.isEmpty() && outputsLinked(page, block).isEmpty()) {
          List<String> lines = unlinked.computeIfAbsent(ROOT.relativize(page).toString(), k -> new ArrayList<>());
          figures.forEach(f -> lines.add(f.number() + " " + f.unit() + " (" + firstLine(block) + ")"));
        }
      }
    }
    Path ledger = ROOT.resolve(LEDGER);
    if (Boolean.getBoolean("muster.docs.write")) {
      StringBuilder out = new StringBuilder(LEDGER_HEADER);
      unlinked.forEach((page, figures) -> out.append(figures.size()).append('\t').append(page).append('\n'));
      Files.writeString(ledger, out);
      return;
    }
    Map<String, Integer> allowed = new TreeMap<>();
    for (String line : Files.readAllLines(ledger)) {
      if (!line.isBlank() && !line.startsWith("#")) {
        String[] cells = line.split("\t");
        assertThat(cells).as("%s: a line is COUNT<tab>PAGE: %s", LEDGER, line).hasSize(2);
        allowed.put(cells[1], Integer.parseInt(cells[0]));
      }
    }
    List<String> wrong = new ArrayList<>();
    Set<String> pages = new TreeSet<>(allowed.keySet());
    pages.addAll(unlinked.keySet());
    for (String page : pages) {
      int now = unlinked.getOrDefault(page, List.of()).size();
      int was = allowed.getOrDefault(page, 0);
      if (now > was) {
        wrong.add(page + ": " + now + " figure(s) in blocks that link no output, " + was + " allowed; link the output"
            + " a measurement comes from, write a setting or a derived figure as code or in words: "
            + unlinked.get(page));
      } else if (now < was) {
        wrong.add(page + ": " + now + " figure(s) in blocks that link no output, fewer than the " + was + " in " + LEDGER
            + "; lower its line (or rewrite it: " + REWRITE + ")");
      }
    }
    assertThat(wrong).as("the ledger of figures that link no output, %s", LEDGER).isEmpty();
  }

  @Test
  void aFigureIsTracedAsWrittenRoundedOrFromMilliseconds() {
    Outputs out = Outputs.of(List.of("run 1: 2,327 ms after GO; p99 1.159 s; 83 ms; 12 of 20 ok"));
    assertThat(traced(new Figure("2327", "ms"), out)).isTrue();
    assertThat(traced(new Figure("2.3", "s"), out)).as("2,327 ms as seconds").isTrue();
    assertThat(traced(new Figure("1.16", "s"), out)).as("rounded").isTrue();
    assertThat(traced(new Figure("12", null), out)).isTrue();
    assertThat(traced(new Figure("292", "ms"), out)).isFalse();
    assertThat(traced(new Figure("2.4", "s"), out)).isFalse();
    assertThat(traced(new Figure("2.3", "ms"), out)).as("only seconds come from ms").isFalse();
  }

  @Test
  void figuresAreUnitNumbersRangesAndNOfMButNotCodeOrLinkTargets() {
    String block = withoutCodeAndLinks("failed 3 of 19 in 1,102 s, p50 199-287 ms, 37 KiB, `--ttl 3s` "
        + "[run 2](bench-2.txt), 7 `ArrayDeque`s");
    assertThat(figures(block)).containsExactlyInAnyOrder(new Figure("199", "ms"), new Figure("287", "ms"),
        new Figure("3", null), new Figure("19", null), new Figure("1102", "s"), new Figure("37", "KiB"));
  }

  @Test
  void blocksAreParagraphsListItemsAndTableRowsWithoutFencedCode() {
    assertThat(blocks("a\nb\n\n- c\n  d\n- e\n| f |\n```\n1 ms\n```\ng\n"))
        .containsExactly("a\nb\n", "- c\n  d\n", "- e\n", "| f |", "g\n");
  }

  private static List<Path> outputsLinked(Path page, String block) {
    List<Path> out = new ArrayList<>();
    Matcher l = LINK.matcher(block);
    while (l.find()) {
      String target = l.group(1);
      if (target.matches("^[a-z]+:.*")) {
        continue;
      }
      Path p = page.getParent().resolve(target).normalize();
      if (Files.isRegularFile(p) && OUTPUT.matcher(p.toString()).matches()) {
        out.add(p);
      }
    }
    return out;
  }

  /** Paragraphs, list items and table rows; fenced code is left out. */
  static List<String> blocks(String markdown) {
    List<String> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean fence = false;
    for (String line : markdown.split("\n", -1)) {
      if (line.stripLeading().startsWith("```")) {
        fence = !fence;
        flush(current, out);
        continue;
      }
      if (fence) {
        continue;
      }
      if (line.isBlank() || line.startsWith("|") || line.matches("^\\s*([-*]|\\d+\\.)\\s.*")) {
        flush(current, out);
      }
      if (line.startsWith("|")) {
        out.add(line);
      } else if (!line.isBlank()) {
        current.append(line).append('\n');
      }
    }
    flush(current, out);
    return out;
  }

  private static void flush(StringBuilder current, List<String> out) {
    if (current.length() > 0) {
      out.add(current.toString());
      current.setLength(0);
    }
  }

  /**
   * {@code block} with each link as its text and each code span as a mark that is no figure's part (a span dropped
   * outright made "7 {@code ArrayDeque}s" a figure, "7 s").
   */
  static String withoutCodeAndLinks(String block) {
    return block.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replaceAll("`[^`]*`", "§");
  }

  /** The figures of {@code text}: numbers with a unit, both ends of a range, both numbers of "N of M". */
  static List<Figure> figures(String text) {
    List<Figure> out = new ArrayList<>();
    Matcher r = RANGE.matcher(text);
    while (r.find()) {
      out.add(new Figure(number(r.group(1), r.group(2)), r.group(5)));
      out.add(new Figure(number(r.group(3), r.group(4)), r.group(5)));
    }
    Matcher o = OF.matcher(text);
    while (o.find()) {
      out.add(new Figure(number(o.group(1), o.group(2)), null));
      out.add(new Figure(number(o.group(3), o.group(4)), null));
    }
    Matcher m = FIGURE.matcher(text);
    while (m.find()) {
      out.add(new Figure(number(m.group(1), m.group(2)), m.group(3)));
    }
    return out;
  }

  private static String number(String whole, String fraction) {
    return whole.replace(",", "") + (fraction == null ? "" : "." + fraction);
  }

  /**
   * As written; or an output's more precise number rounded half-up to the figure's decimals; or, for a figure in
   * seconds, an output's figure in ms so rounded.
   */
  static boolean traced(Figure figure, Outputs outputs) {
    String f = figure.number();
    if (outputs.numbers().contains(f)) {
      return true;
    }
    int decimals = f.contains(".") ? f.length() - f.indexOf('.') - 1 : 0;
    for (String n : outputs.numbers()) {
      int d = n.contains(".") ? n.length() - n.indexOf('.') - 1 : 0;
      if (d > decimals && new BigDecimal(n).setScale(decimals, RoundingMode.HALF_UP).toPlainString().equals(f)) {
        return true;
      }
    }
    if ("s".equals(figure.unit())) {
      for (BigDecimal ms : outputs.millis()) {
        if (ms.movePointLeft(3).setScale(decimals, RoundingMode.HALF_UP).toPlainString().equals(f)) {
          return true;
        }
      }
    }
    return false;
  }

  private static String firstLine(String block) {
    String line = block.strip().split("\n")[0];
    return line.length() > 100 ? line.substring(0, 100) + "..." : line;
  }
}
