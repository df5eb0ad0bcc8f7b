package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** The rules every command follows: defaults shown in --help, --json wherever events are printed. */
class CommandLineConsistencyTest {
  /** The commands that print events or instances as lines. */
  private static final List<String> PRINTING_EVENTS = List.of("register", "watch", "call", "ls", "grpc-serve", "grpc-call");

  private static Map<String, CommandLine> commands() {
    return new CommandLine(new Main()).getSubcommands();
  }

  /** Every command and subcommand ({@code sim ttl}, {@code auth enable}), by its qualified name. */
  private static Map<String, CommandLine> allCommands() {
    Map<String, CommandLine> all = new java.util.LinkedHashMap<>();
    java.util.ArrayDeque<CommandLine> todo = new java.util.ArrayDeque<>(commands().values());
    while (!todo.isEmpty()) {
      CommandLine cli = todo.poll();
      all.putIfAbsent(cli.getCommandSpec().qualifiedName(), cli);
      todo.addAll(cli.getSubcommands().values());
    }
    return all;
  }

  @Test
  void helpOfEveryCommandShowsTheDefaultOfEveryOptionThatHasOne() {
    assertThat(allCommands()).containsKeys("muster sim ttl", "muster auth enable");
    List<String> missing = new ArrayList<>();
    allCommands().forEach((name, cli) -> {
      for (OptionSpec o : cli.getCommandSpec().options()) {
        if (o.hidden() || o.usageHelp() || o.versionHelp() || o.defaultValue() == null) {
          continue;
        }
        String help = String.join(" ", o.description()).replaceAll("\\s+", " ");
        if (!help.contains("default " + o.defaultValue())) {
          missing.add(name + " " + o.longestName() + " (default " + o.defaultValue() + "): " + help);
        }
      }
    });
    assertThat(missing).as("options whose --help does not show their default").isEmpty();
  }

  @Test
  void everyCommandAndSubcommandTakesHelp() {
    List<String> without = new ArrayList<>();
    allCommands().forEach((name, cli) -> {
      if (!name.equals("muster help") && cli.getCommandSpec().findOption("--help") == null) {
        without.add(name);
      }
    });
    assertThat(without).as("commands without --help").isEmpty();
  }

  @Test
  void helpRendersWithoutFormatWarnings() {
    allCommands().forEach((name, cli) -> assertThat(cli.getUsageMessage()).as(name)
        .doesNotContain("${DEFAULT-VALUE}").doesNotContain("%n"));
  }

  @Test
  void everyCommandThatPrintsEventsAcceptsJson() {
    for (String name : PRINTING_EVENTS) {
      assertThat(commands().get(name).getCommandSpec().findOption("--json")).as(name).isNotNull();
    }
  }

  @Test
  void registerAcceptsJson() {
    CommandLine cli = new CommandLine(new Main());
    CommandLine.ParseResult parsed = cli.parseArgs("register", "--service", "orders", "--address", "127.0.0.1:8080",
        "--json");
    assertThat(parsed.subcommand().hasMatchedOption("--json")).isTrue();
  }
}
