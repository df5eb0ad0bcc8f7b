package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class MainTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(String... args) {
    return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
  }

  @Test
  void helpListsTheCommands() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString()).contains("etcd").contains("lab").contains("Usage: muster");
  }

  @Test
  void anUnknownFlagExitsTwoWithOneLineNamingIt() {
    assertThat(run("--bogus")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("--bogus").contains("muster --help");
  }

  @Test
  void anUnknownFlagOfASubcommandPointsAtThatSubcommandsHelp() {
    assertThat(run("etcd", "--nope")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("--nope").contains("muster etcd --help");
  }

  @Test
  void etcdRefusesAMemberCountOtherThanOneThreeOrFive() {
    assertThat(run("etcd", "--members", "2")).isEqualTo(2);
    assertThat(err.toString().strip()).isEqualTo("muster: --members is 2: use 1, 3 or 5");
  }

  @Test
  void etcdRefusesABadDurationWithTheFormatToUse() {
    assertThat(run("etcd", "--start-timeout", "soon")).isEqualTo(2);
    assertThat(err.toString()).contains("'soon' is not a duration").contains("500ms");
  }

  @Test
  void labListsEveryScenarioOfTheSpec() {
    assertThat(run("lab", "--list")).isZero();
    assertThat(out.toString()).contains("sigstop_stale_window").contains("kill9_stale_window")
        .contains("minority_partition").contains("reconnect_storm").doesNotContain("(not built yet)");
  }

  @Test
  void labRefusesAnUnknownScenarioWithTheWayToListThem() {
    assertThat(run("lab", "no_such_scenario")).isEqualTo(2);
    assertThat(err.toString().strip()).contains("no_such_scenario").contains("muster lab --list");
  }

  @Test
  void chaosRefusesBadOptionsInOneLineBeforeStartingAnything() {
    assertThat(run("chaos", "--members", "2")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("members").contains("1 or 3");
  }

  @Test
  void chaosRefusesASeedsFileItCannotReadOrThatListsNothingForTheMembers(@org.junit.jupiter.api.io.TempDir
      java.nio.file.Path dir) throws Exception {
    assertThat(run("chaos", "--seeds-file", dir.resolve("absent.txt").toString())).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("absent.txt");

    java.nio.file.Path seeds = java.nio.file.Files.writeString(dir.resolve("seeds.txt"), "chaos 3 5\n");
    err.getBuffer().setLength(0);
    assertThat(run("chaos", "--seeds-file", seeds.toString(), "--members", "1")).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("no 'chaos' seeds for 1 member");

    java.nio.file.Files.writeString(seeds, "chaos three 5\n");
    err.getBuffer().setLength(0);
    assertThat(run("chaos", "--seeds-file", seeds.toString())).isEqualTo(2);
    assertThat(err.toString().strip()).doesNotContain("\n").contains("seeds.txt:1").contains("chaos 1 42");
  }

  @Test
  void durationsAreWrittenWithAUnit() {
    DurationConverter c = new DurationConverter();
    assertThat(c.convert("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(c.convert("3s")).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.convert("2m")).isEqualTo(Duration.ofMinutes(2));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> c.convert("3"))
        .isInstanceOf(TypeConversionException.class);
  }
}
