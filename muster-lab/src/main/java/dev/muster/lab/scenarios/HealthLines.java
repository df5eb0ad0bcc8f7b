package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.LabContext;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Log arithmetic of the health scenarios (issue 16): a consumer's health events ({@code probe_down},
 * {@code probe_up}, ... naming their instance in {@code "instance"}) and when its calls reached one instance.
 */
final class HealthLines {
  private HealthLines() {}

  /** How often the health scenarios read their consumers' logs while they wait: the logs grow fast. */
  static final Duration POLL = Duration.ofMillis(100);

  /** A gap this long in every consumer's fixed-rate calls at once is reported as a stall of the machine. */
  static final Duration STALL = Duration.ofSeconds(1);

  /**
   * Waits until each of the probing {@code consumers} has settled ({@link dev.muster.testing.JsonLog#probesSettled}):
   * a consumer's first probes, while its JVM and five others start on two cores, can time out against a healthy
   * provider, and a fault started then would be measured against a consumer already routing around one.
   */
  static void awaitSettled(LabContext ctx, Duration quiet, ChildProcess... consumers) {
    ctx.await("probes settled (no endpoint probed down, no probe or panic event for " + quiet.toMillis()
        + " ms)", Duration.ofSeconds(30), POLL, () -> {
          Instant now = Instant.now();
          return Arrays.stream(consumers).allMatch(c -> c.json().probesSettled(quiet, now));
        });
  }

  /** {@code p}'s probe_down lines in {@code [from, to)} about any instance but {@code except}. */
  static long probeDownsOfOthers(ChildProcess p, String except, Instant from, Instant to) {
    return p.json().events("probe_down").stream().filter(n -> !n.path("instance").asText().equals(except))
        .map(JsonLog::ts).filter(t -> !t.isBefore(from) && t.isBefore(to)).count();
  }

  /**
   * {@code "; every consumer's calls paused N ms from T (the machine stalled)"} when each of {@code consumers} has a
   * gap of at least {@code min} between two consecutive call starts in {@code [from, to)} and those gaps overlap,
   * else {@code ""}. The consumers call at a fixed rate, so a gap in all of them at once is the machine (a 2-core
   * VM paused or starved), not Muster; a summary says so next to the figures it may have bent.
   */
  static String stall(Duration min, Instant from, Instant to, ChildProcess... consumers) {
    List<List<Instant>> starts = new ArrayList<>();
    for (ChildProcess c : consumers) {
      starts.add(c.json().events("call").stream().map(JsonLog::ts)
          .filter(t -> !t.isBefore(from) && t.isBefore(to)).toList());
    }
    return commonGap(min, starts).map(g -> "; every consumer's calls paused " + Duration.between(g[0], g[1]).toMillis()
        + " ms from " + g[0] + " (the machine stalled)").orElse("");
  }

  /**
   * The overlap {@code [start, end]} of each series' longest gap between consecutive instants, when every series
   * has one of at least {@code min} and they overlap; else empty.
   */
  static Optional<Instant[]> commonGap(Duration min, List<List<Instant>> series) {
    Instant start = null;
    Instant end = null;
    for (List<Instant> starts : series) {
      Instant gapStart = null;
      Instant gapEnd = null;
      for (int i = 1; i < starts.size(); i++) {
        Duration gap = Duration.between(starts.get(i - 1), starts.get(i));
        if (gap.compareTo(min) >= 0
            && (gapStart == null || gap.compareTo(Duration.between(gapStart, gapEnd)) > 0)) {
          gapStart = starts.get(i - 1);
          gapEnd = starts.get(i);
        }
      }
      if (gapStart == null) {
        return Optional.empty();
      }
      start = start == null || gapStart.isAfter(start) ? gapStart : start;
      end = end == null || gapEnd.isBefore(end) ? gapEnd : end;
    }
    return start != null && start.isBefore(end) ? Optional.of(new Instant[] {start, end}) : Optional.empty();
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
