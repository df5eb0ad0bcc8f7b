package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Log arithmetic of the health scenarios (issue 16): a consumer's health events ({@code probe_down},
 * {@code probe_up}, ... naming their instance in {@code "instance"}) and when its calls reached one instance.
 */
final class HealthLines {
  private HealthLines() {}

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
