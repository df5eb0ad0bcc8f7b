package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The docs a newcomer reads: README.md stays a page of at most 300 lines, and every relative link in it and in
 * {@code docs/} (a file, a directory, a heading's anchor) leads somewhere. Anchors are made as GitHub makes them
 * from headings: lower case, punctuation dropped, spaces to hyphens, {@code -1}, {@code -2} for repeats.
 */
class DocsTest {
  private static final Path ROOT = DocPages.ROOT;
  private static final int README_MAX_LINES = 300;
  private static final Pattern LINK = Pattern.compile("!?\\[([^\\]]*)\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern CODE_SPAN = Pattern.compile("`[^`]*`");
  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");

  @Test
  void readmeIsAPageANewcomerReads() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
    assertThat(lines.size()).as("README.md's lines (longer material goes in docs/, indexed by docs/README.md)")
        .isLessThanOrEqualTo(README_MAX_LINES);
    assertThat(lines).as("README.md opens with the two set-up commands").contains(
        "./muster lab     # the fault lab on private etcd processes: prints the evidence table",
        "./muster test    # the whole test suite against real etcd");
  }

  @Test
  void everyRelativeLinkAndAnchorResolves() throws IOException {
    List<Path> pages = DocPages.all();
    assertThat(pages).as("README.md and the pages under docs/").hasSizeGreaterThan(20);
    Map<Path, Set<String>> anchors = new HashMap<>();
    List<String> broken = new ArrayList<>();
    for (Path page : pages) {
      boolean fenced = false;
      int n = 0;
      for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
        n++;
        if (line.stripLeading().startsWith("```")) {
          fenced = !fenced;
          continue;
        }
        if (fenced) {
          continue;
        }
        Matcher m = LINK.matcher(CODE_SPAN.matcher(line).replaceAll(""));
        while (m.find()) {
          String problem = check(page, m.group(2), anchors);
          if (problem != null) {
            broken.add(ROOT.relativize(page) + ":" + n + ": " + m.group(2) + ": " + problem);
          }
        }
      }
    }
    assertThat(broken).as("links that lead nowhere (fix the path or the anchor)").isEmpty();
  }

  /** Null when {@code target}, linked from {@code page}, resolves; else what is wrong. */
  private static String check(Path page, String target, Map<Path, Set<String>> anchors) {
    if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
      return null; // https:, mailto: ... : not ours to check here
    }
    int hash = target.indexOf('#');
    String path = hash < 0 ? target : target.substring(0, hash);
    String fragment = hash < 0 ? null : target.substring(hash + 1);
    Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
    if (!file.startsWith(ROOT)) {
      return "outside the repository";
    }
    if (!Files.exists(file)) {
      return "no such file or directory";
    }
    if (fragment == null || fragment.isEmpty()) {
      return null;
    }
    if (!file.toString().endsWith(".md")) {
      return fragment.matches("L\\d+(-L\\d+)?") ? null : "an anchor into a file that is not Markdown";
    }
    Set<String> known = anchors.computeIfAbsent(file, DocsTest::anchorsOf);
    return known.contains(fragment) ? null : "no heading makes the anchor #" + fragment;
  }

  /** The anchors GitHub makes for {@code file}'s headings, and its explicit HTML anchors. */
  static Set<String> anchorsOf(Path file) {
    Set<String> out = new HashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean fenced = false;
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (line.stripLeading().startsWith("```")) {
          fenced = !fenced;
          continue;
        }
        if (fenced) {
          continue;
        }
        Matcher h = HEADING.matcher(line);
        if (h.matches()) {
          String slug = slug(h.group(2));
          int times = seen.merge(slug, 1, Integer::sum);
          out.add(times == 1 ? slug : slug + "-" + (times - 1));
        }
        Matcher a = HTML_ANCHOR.matcher(line);
        while (a.find()) {
          out.add(a.group(1));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** A heading's anchor as GitHub makes it. */
  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1"); // a link in a heading: its text
    return text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
  }

  @Test
  void slugsAreGitHubs() {
    assertThat(slug("The chaos checker (`muster chaos`)")).isEqualTo("the-chaos-checker-muster-chaos");
    assertThat(slug("`muster register` — a provider from the shell"))
        .isEqualTo("muster-register--a-provider-from-the-shell");
    assertThat(slug("What else differs between 3.4.23 and 3.5.30, and what Muster relies on"))
        .isEqualTo("what-else-differs-between-3423-and-3530-and-what-muster-relies-on");
  }
}
