package dev.muster.example.spring;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The steps of a guide page (docs/guide/production.md): each {@code sh} block right after a {@code <!-- guide-test:
 * KIND ... -->} comment. {@code run expect="TEXT"}: a script that must exit 0 with TEXT in its output;
 * {@code background ready="TEXT" [exports]}: a script whose last command keeps running, ready once TEXT is in its
 * output, whose {@code export MUSTER_...=} lines (with {@code exports}) hold for the steps after it. A comment that
 * does not parse, or a step without its block, is an {@link IllegalArgumentException} naming the line.
 *
 * <p>Immutable.
 */
record GuideSteps(List<Step> steps) {
  private static final Pattern DIRECTIVE = Pattern.compile("<!--\\s*guide-test:\\s*(.*?)\\s*-->");
  private static final Pattern ATTRIBUTE = Pattern.compile("(\\w+)(?:=\"([^\"]*)\")?");

  /** What a step is, and what its script ends with. */
  enum Kind { RUN, BACKGROUND }

  /**
   * One step: {@code text} is what it waits for ({@code expect} or {@code ready}), {@code script} the block as the
   * page has it, {@code line} the comment's line (1-based).
   */
  record Step(int line, Kind kind, String text, boolean exports, String script) {
    /** The script's logical lines: a line ending in a backslash joined with the next. */
    List<String> commands() {
      List<String> out = new ArrayList<>();
      StringBuilder current = new StringBuilder();
      for (String l : script.split("\n", -1)) {
        if (l.endsWith("\\")) {
          current.append(l, 0, l.length() - 1);
          continue;
        }
        current.append(l);
        if (!current.toString().isBlank()) {
          out.add(current.toString().strip());
        }
        current.setLength(0);
      }
      return out;
    }
  }

  static GuideSteps read(Path page) throws IOException {
    return parse(Files.readString(page));
  }

  static GuideSteps parse(String markdown) {
    String[] lines = markdown.split("\n", -1);
    List<Step> steps = new ArrayList<>();
    for (int i = 0; i < lines.length; i++) {
      Matcher d = DIRECTIVE.matcher(lines[i].strip());
      if (!d.matches()) {
        continue;
      }
      int at = i + 1;
      Kind kind = null;
      String text = null;
      boolean exports = false;
      Matcher a = ATTRIBUTE.matcher(d.group(1));
      int end = 0;
      while (a.find()) {
        if (!d.group(1).substring(end, a.start()).isBlank()) {
          throw new IllegalArgumentException("line " + at + ": cannot read '" + d.group(1).substring(end, a.start())
              + "' in the guide-test comment; write run expect=\"TEXT\" or background ready=\"TEXT\" [exports]");
        }
        end = a.end();
        String name = a.group(1);
        switch (name) {
          case "run", "background" -> kind = Kind.valueOf(name.toUpperCase(java.util.Locale.ROOT));
          case "expect", "ready" -> text = a.group(2);
          case "exports" -> exports = true;
          default -> throw new IllegalArgumentException("line " + at + ": unknown word '" + name
              + "' in the guide-test comment; use run, background, expect, ready or exports");
        }
      }
      if (kind == null || text == null || text.isEmpty()) {
        throw new IllegalArgumentException("line " + at + ": a guide-test comment needs run expect=\"TEXT\" or"
            + " background ready=\"TEXT\"");
      }
      if ((kind == Kind.RUN) != d.group(1).contains("expect=") || (kind == Kind.RUN && exports)) {
        throw new IllegalArgumentException("line " + at + ": run takes expect=\"TEXT\"; background takes"
            + " ready=\"TEXT\" and exports");
      }
      int open = i + 1;
      while (open < lines.length && lines[open].isBlank()) {
        open++;
      }
      if (open >= lines.length || !lines[open].strip().equals("```sh")) {
        throw new IllegalArgumentException("line " + at + ": a guide-test comment must be followed by a ```sh block");
      }
      int close = open + 1;
      while (close < lines.length && !lines[close].strip().equals("```")) {
        close++;
      }
      if (close >= lines.length) {
        throw new IllegalArgumentException("line " + (open + 1) + ": the ```sh block is not closed");
      }
      steps.add(new Step(at, kind, text, exports, String.join("\n", List.of(lines).subList(open + 1, close))));
      i = close;
    }
    return new GuideSteps(List.copyOf(steps));
  }
}
