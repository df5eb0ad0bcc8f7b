package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.LabContext;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Consumers for the scenarios that call at another rate or with another attempt timeout than the lab's
 * parameters, and the warm-up wait they share. {@link LabContext#consumer} cannot be told these through its extra
 * arguments: {@code muster call} (picocli) rejects an option given twice. Otherwise the same A-style (ejection after
 * 1 failure for the lab's ejection time, the lab's retries) and B-style (neither) callers, round robin unless a
 * policy is given.
 */
final class Callers {
  private Callers() {}

  /** {@code muster call SERVICE /hello --json} every {@code interval}, each attempt within {@code attemptTimeout}. */
  static ChildProcess start(LabContext ctx, String name, String service, String endpoints, boolean ejectAndRetry,
      Duration interval, Duration attemptTimeout, String... extra) {
    return startWithPolicy(ctx, name, service, endpoints, "ROUND_ROBIN", ejectAndRetry, interval, attemptTimeout,
        extra);
  }

  /** {@link #start} balancing with {@code policy} ({@code muster call --policy}) instead of round robin. */
  static ChildProcess startWithPolicy(LabContext ctx, String name, String service, String endpoints, String policy,
      boolean ejectAndRetry, Duration interval, Duration attemptTimeout, String... extra) {
    List<String> args = new ArrayList<>(List.of("call", service, "/hello", "--count", "0", "--interval",
        millis(interval), "--attempt-timeout", millis(attemptTimeout), "--policy", policy, "--json",
        "--endpoints", endpoints));
    if (ejectAndRetry) {
      args.addAll(List.of("--idempotent", "--eject-after", "1", "--ejection-time", millis(ctx.params().ejectionTime()),
          "--max-retries", Integer.toString(ctx.params().maxRetries())));
    } else {
      args.addAll(List.of("--no-eject", "--max-retries", "0"));
    }
    args.addAll(List.of(extra));
    return ctx.start(name, args.toArray(String[]::new));
  }

  static boolean lastOk(ChildProcess caller, int n) {
    List<JsonNode> calls = caller.json().events("call");
    return calls.size() >= n && calls.subList(calls.size() - n, calls.size()).stream()
        .allMatch(c -> c.path("ok").asBoolean());
  }

  /** The first line of {@code event} at or after {@code after}. */
  static Optional<Instant> firstAt(ChildProcess p, String event, Instant after) {
    return p.json().events(event).stream().map(JsonLog::ts).filter(t -> !t.isBefore(after)).findFirst();
  }

  private static String millis(Duration d) {
    return d.toMillis() + "ms";
  }
}
