package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * docs/reference/cli-options.md is every command's and subcommand's {@code --help}, as picocli renders it from the
 * commands' own annotations: this test fails when the page and the code differ, naming the first command that does,
 * and {@code -Dmuster.docs.write=true} rewrites the page. So the reference cannot drift from the options.
 */
class CliReferenceTest {
  static final Path PAGE = Path.of(System.getProperty("muster.docs.dir", "../docs"), "reference", "cli-options.md");
  static final int WIDTH = 118;

  @Test
  void theReferencePageIsEveryCommandsHelp() throws Exception {
    String page = render();
    if (Boolean.getBoolean("muster.docs.write")) {
      Files.writeString(PAGE, page);
    }
    String committed = Files.exists(PAGE) ? Files.readString(PAGE) : "";
    if (!committed.equals(page)) {
      String[] want = page.split("\n", -1);
      String[] have = committed.split("\n", -1);
      int i = 0;
      while (i < Math.min(want.length, have.length) && want[i].equals(have[i])) {
        i++;
      }
      String section = "";
      for (int j = Math.min(i, want.length - 1); j >= 0; j--) {
        if (want[j].startsWith("## ")) {
          section = want[j].substring(3);
          break;
        }
      }
      assertThat(committed).as("%s differs from the commands' --help first at line %d (%s): the code says '%s';"
          + " run mvn -pl muster-cli test -Dtest=CliReferenceTest -Dmuster.docs.write=true and commit the page",
          PAGE, i + 1, section, i < want.length ? want[i] : "(end)").isEqualTo(page);
    }
  }

  /**
   * No command's {@code --help} makes picocli warn: it formats each description with {@link String#format}, and a
   * bare {@code %} ({@code over 80 % of it}) printed a warning in the middle of {@code muster doctor --help} and the
   * raw text. Found by this page.
   */
  @Test
  void noHelpMakesPicocliWarn() {
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    System.setErr(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
    try {
      render();
    } finally {
      System.setErr(err);
    }
    assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8)).as("what picocli printed while rendering"
        + " every --help (write %% for a %)").doesNotContain("picocli WARN");
  }

  /** The page: a heading and the usage text of every command, depth first in the order each declares them. */
  static String render() {
    StringBuilder out = new StringBuilder();
    out.append("# Every option of every command\n\n")
        .append("Generated from the commands' own `--help` by `CliReferenceTest` (module `muster-cli`), which fails\n")
        .append("when this page and the code differ; do not edit it: run\n")
        .append("`mvn -pl muster-cli test -Dtest=CliReferenceTest -Dmuster.docs.write=true`. What the commands do,\n")
        .append("with examples, is on [the command line](cli.md).\n");
    Deque<CommandLine> todo = new ArrayDeque<>();
    todo.push(new CommandLine(new Main()));
    while (!todo.isEmpty()) {
      CommandLine cli = todo.pop();
      String name = cli.getCommandSpec().qualifiedName();
      if (name.equals("muster help")) {
        continue;
      }
      cli.setUsageHelpWidth(WIDTH);
      out.append("\n## `").append(name).append("`\n\n```text\n")
          .append(cli.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing()).append("\n```\n");
      List<CommandLine> subs = new ArrayList<>(cli.getSubcommands().values());
      for (int i = subs.size() - 1; i >= 0; i--) {
        if (!todo.contains(subs.get(i)) && subs.get(i).getParent() == cli) {
          todo.push(subs.get(i));
        }
      }
    }
    return out.toString();
  }
}
