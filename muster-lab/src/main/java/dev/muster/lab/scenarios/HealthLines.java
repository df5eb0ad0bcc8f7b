package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.LabContext;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Log arithmetic of the health scenarios (issue 16): a consumer's health events ({@code probe_down},
 * {@code probe_up}, ... naming their instance in {@code "instance"}) and when its calls reached one instance.
 */
final class HealthLines {
  private HealthLines() {}

  /** How often the health scenarios read their consumers' logs while they wait: the logs grow fast. */
  static final Duration POLL = Duration.ofMillis(100);

  private static final Set<String> VERDICTS = Set.of("probe_down", "probe_up", "panic_on", "panic_off");

  /**
   * Waits until each of the probing {@code consumers} has every endpoint routable by its probes (no
   * {@code probe_down} without a later {@code probe_up}) and printed no probe or panic event for {@code quiet}
   * (and has probed for that long: its first line, the first set, counts as an event):
   * a consumer's first probes, while its JVM and five others start on two cores, can time out against a healthy
   * provider, and a fault started then would be measured against a consumer already routing around one.
   */
  static void awaitSettled(LabContext ctx, Duration quiet, ChildProcess... consumers) {
    ctx.await("probes settled (no endpoint probed down, no probe or panic event for " + quiet.toMillis()
        + " ms)", Duration.ofSeconds(30), POLL, () -> {
          Instant now = Instant.now();
          for (ChildProcess c : consumers) {
            Map<String, String> last = new HashMap<>();
            List<JsonNode> lines = c.json().lines();
            if (lines.isEmpty()) {
              return false;
            }
            Instant lastEvent = JsonLog.ts(lines.get(0)); // its first set: probes have run for quiet since then
            for (JsonNode n : lines) {
              String event = n.path("event").asText();
              if (VERDICTS.contains(event)) {
                lastEvent = JsonLog.ts(n);
                if (n.has("instance")) {
                  last.put(n.path("instance").asText(), event);
                }
              }
            }
            if (last.containsValue("probe_down") || Duration.between(lastEvent, now).compareTo(quiet) < 0) {
              return false;
            }
          }
          return true;
        });
  }

  /** {@code p}'s probe_down lines in {@code [from, to)} about any instance but {@code except}. */
  static long probeDownsOfOthers(ChildProcess p, String except, Instant from, Instant to) {
    return p.json().events("probe_down").stream().filter(n -> !n.path("instance").asText().equals(except))
        .map(JsonLog::ts).filter(t -> !t.isBefore(from) && t.isBefore(to)).count();
  }

  /** When {@code p} first printed {@code event} about {@code instance}, at or after {@code after}. */
  static Optional<Instant> first(ChildProcess p, String event, String instance, Instant after) {
    return p.json().events(event).stream().filter(n -> n.path("instance").asText().equals(instance))
        .map(JsonLog::ts).filter(t -> !t.isBefore(after)).findFirst();
  }

  /** The events {@code event} that {@code p} printed in {@code [from, to)}. */
  static List<Instant> all(ChildProcess p, String event, Instant from, Instant to) {
    return p.json().events(event).stream().map(JsonLog::ts).filter(t -> !t.isBefore(from) && t.isBefore(to))
        .toList();
  }

  /** Whether one of the call's attempts went to {@code id}. */
  static boolean attempted(JsonNode call, String id) {
    for (JsonNode a : call.path("attempts")) {
      if (a.asText().equals(id)) {
        return true;
      }
    }
    return false;
  }

  /** When the first of {@code p}'s calls that started at or after {@code after} and tried {@code id} started. */
  static Optional<Instant> firstCallTo(ChildProcess p, String id, Instant after) {
    return p.json().events("call").stream().filter(c -> attempted(c, id)).map(JsonLog::ts)
        .filter(t -> !t.isBefore(after)).findFirst();
  }

  /** When the last of {@code calls} that tried {@code id} started. */
  static Optional<Instant> lastCallTo(List<JsonNode> calls, String id) {
    return calls.stream().filter(c -> attempted(c, id)).map(JsonLog::ts).reduce((a, b) -> b);
  }

  /** When the last failed one of {@code calls} started. */
  static Optional<Instant> lastFailed(List<JsonNode> calls) {
    return calls.stream().filter(c -> !c.path("ok").asBoolean()).map(JsonLog::ts).reduce((a, b) -> b);
  }

  /** {@code "812 ms"} from {@code from} to {@code t}, or {@code "never"}. */
  static String ms(Instant from, Optional<Instant> t) {
    return t.map(x -> java.time.Duration.between(from, x).toMillis() + " ms").orElse("never");
  }

  static String percent(long part, long whole) {
    return whole == 0 ? "-" : Math.round(100.0 * part / whole) + " %";
  }
}
