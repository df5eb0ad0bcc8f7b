package dev.muster.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.JsonLog;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** When a caller counts as warm: a fault after warm-up meets no call left over from the cold start. */
class FleetWarmTest {
  private static String call(long seq) {
    return "{\"event\":\"call\",\"ts\":\"2026-12-06T08:22:36Z\",\"seq\":" + seq + ",\"ok\":true,"
        + "\"attempts\":[\"p1\"],\"latency_us\":500000}";
  }

  /** Calls {@code from..to} logged, in that order, but for {@code missing}. */
  private static List<JsonNode> logged(int from, int to, int... missing) {
    List<String> lines = new ArrayList<>();
    for (int s = from; s <= to; s++) {
      final int seq = s;
      if (java.util.Arrays.stream(missing).noneMatch(m -> m == seq)) {
        lines.add(call(s));
      }
    }
    return JsonLog.parse(lines).events("call");
  }

  @Test
  void aColdCallStillOnItsRetryKeepsTheCallerCold() {
    // f4e053a's lab run: calls 3, 4 and 9 of A's first were on their retry when 30 later ones had ended ok
    List<JsonNode> calls = logged(1, 40, 3, 4, 9);
    assertThat(Fleet.noneInFlightBefore(calls, 11)).isFalse();
    assertThat(Fleet.noneInFlightBefore(calls, 3)).isTrue();
  }

  @Test
  void everyEarlierCallEndedMakesItWarm() {
    assertThat(Fleet.noneInFlightBefore(logged(1, 40), 11)).isTrue();
    assertThat(Fleet.noneInFlightBefore(logged(1, 40), 1)).isTrue();
  }

  @Test
  void callsLoggedOutOfOrderCountOnce() {
    List<JsonNode> calls = new ArrayList<>(logged(5, 10));
    calls.addAll(logged(1, 4));
    calls.addAll(logged(2, 2)); // a line twice does not stand in for a missing one
    assertThat(Fleet.noneInFlightBefore(calls, 11)).isTrue();
    assertThat(Fleet.noneInFlightBefore(logged(1, 10, 7), 11)).isFalse();
  }
}
