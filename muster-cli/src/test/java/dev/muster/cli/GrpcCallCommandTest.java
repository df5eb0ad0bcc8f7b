package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code muster grpc-call}'s options, parsed in process (its calls through a {@code muster:///} channel are the
 * client side's to test end to end), and the lines it shares with {@code muster call}.
 */
class GrpcCallCommandTest {
  private static GrpcCallCommand parse(String... args) {
    CommandLine cli = new CommandLine(new Main());
    CommandLine.ParseResult parsed = cli.parseArgs(args);
    return (GrpcCallCommand) parsed.subcommand().commandSpec().userObject();
  }

  @Test
  void theDefaultsAreOneSayThroughTheMusterPolicy() {
    GrpcCallCommand c = parse("grpc-call", "orders");
    assertThat(c.service).isEqualTo("orders");
    assertThat(c.loop.count).isEqualTo(1);
    assertThat(c.loop.interval).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.delay).isZero();
    assertThat(c.stream).isFalse();
    assertThat(c.deadline).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.loop.attemptTimeout).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.validate()).isEqualTo(GrpcCallCommand.Policy.MUSTER);
    assertThat(c.validate().grpcName()).isEqualTo("muster");
  }

  @Test
  void everyOptionIsParsedAndThePolicyNamesAreGrpcJavas() {
    GrpcCallCommand c = parse("grpc-call", "orders", "--count", "0", "--interval", "50ms", "--delay", "1s",
        "--stream", "--messages", "7", "--deadline", "3s", "--attempt-timeout", "300ms", "--policy", "round_robin", "--json", "--quiet",
        "--endpoints", "http://127.0.0.1:2389", "--namespace", "lab");
    assertThat(c.loop.count).isZero();
    assertThat(c.loop.interval).isEqualTo(Duration.ofMillis(50));
    assertThat(c.delay).isEqualTo(Duration.ofSeconds(1));
    assertThat(c.stream).isTrue();
    assertThat(c.messages).isEqualTo(7);
    assertThat(c.deadline).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.loop.attemptTimeout).isEqualTo(Duration.ofMillis(300));
    assertThat(c.loop.json).isTrue();
    assertThat(c.loop.quiet).isTrue();
    assertThat(c.common.namespace).isEqualTo("lab");
    assertThat(c.validate()).isEqualTo(GrpcCallCommand.Policy.ROUND_ROBIN);
    assertThat(parse("grpc-call", "orders", "--policy", "pick_first").validate().grpcName()).isEqualTo("pick_first");
  }

  @Test
  void badValuesAreRefusedNamingTheFlag() {
    assertThatThrownBy(() -> parse("grpc-call", "orders", "--policy", "random").validate())
        .isInstanceOf(Errors.UsageException.class).hasMessageContaining("--policy is random")
        .hasMessageContaining("muster, round_robin or pick_first");
    assertThatThrownBy(() -> parse("grpc-call", "orders", "--count", "-1").validate())
        .hasMessageContaining("--count is -1");
    assertThatThrownBy(() -> parse("grpc-call", "orders", "--interval", "0s").validate())
        .hasMessageContaining("--interval is 0");
    assertThatThrownBy(() -> parse("grpc-call", "orders", "--attempt-timeout", "0ms").validate())
        .hasMessageContaining("--attempt-timeout is 0");
    assertThatThrownBy(() -> parse("grpc-call", "orders", "--stream", "--messages", "0").validate())
        .hasMessageContaining("--messages is 0");
  }

  @Test
  void aBadPolicyExitsTwoWithOneLineBeforeAnyChannelIsBuilt() {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new String[] {"grpc-call", "orders", "--policy", "random"}, new PrintWriter(out, true),
        new PrintWriter(err, true));
    assertThat(code).isEqualTo(2);
    assertThat(err.toString().strip()).startsWith("muster: --policy is random").doesNotContain("\n");
  }

  @Test
  void grpcCallPrintsTheLinesOfCallWithTheInstanceThatAnsweredAndASummaryOfOkFailedAndRetried() {
    StringWriter text = new StringWriter();
    CallLines lines = new CallLines(new PrintWriter(text, true), "orders", false, false, false);
    lines.call(1, Instant.now(), Duration.ofMillis(14), new CallLines.Outcome(true, "OK", List.of("p2"), false,
        false, null, null));
    lines.call(2, Instant.now(), Duration.ofMillis(3), new CallLines.Outcome(false, "UNAVAILABLE", List.of(), false,
        false, "UNAVAILABLE: no endpoint", null));
    lines.call(3, Instant.now(), Duration.ofMillis(620), new CallLines.Outcome(true, "OK", List.of("p3"), true,
        false, null, null));
    lines.summary(0, 0);
    assertThat(text.toString().lines()).containsExactly("#1 ok OK via p2 (14 ms)",
        "#2 FAILED UNAVAILABLE via - (3 ms) UNAVAILABLE: no endpoint", "#3 ok OK via p3 (620 ms)",
        "2 ok, 1 failed, 1 retried");
  }

  @Test
  void callKeepsItsSummaryWithRetriesAndEjections() {
    StringWriter text = new StringWriter();
    CallLines lines = new CallLines(new PrintWriter(text, true), "orders", false, false, true);
    lines.call(1, Instant.now(), Duration.ofMillis(14), new CallLines.Outcome(true, 200, List.of("p2", "p3"), true,
        false, null, null));
    lines.summary(1, 2);
    assertThat(text.toString().lines()).containsExactly("#1 ok 200 via p2,p3 (14 ms)",
        "1 ok, 0 failed, 1 retried, 1 ejected, 2 retries refused by the budget");
  }
}
