package dev.muster.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.JsonLog;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An instance's share of a consumer's calls, second by second. */
class CallShareTest {
  private static final Instant FROM = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void sharePerFullSecondFromTheCallsThatStartedInIt() {
    List<JsonNode> calls = JsonLog.parse(List.of(
        call("09.900", "p1"), // before FROM: not counted
        call("00.100", "p1"), call("00.200", "p2"), call("00.300", "p3"), call("00.999", "p2"),
        call("01.000", "p1"), call("01.500", "p1"), call("01.600", "p2", "p1"), // a retry that reached p1 counts
        // second 2: no call
        call("03.000"), call("03.500", "p2"), // a call with no attempt (no endpoint) counts in the denominator
        call("04.000", "p1"))) // past the 4 seconds asked for
        .events("call");

    List<Double> shares = CallShare.perSecond(calls, "p1", FROM, 4);

    assertThat(shares).containsExactly(25.0, 100.0, null, 0.0);
  }

  @Test
  void roundsToOneDecimal() {
    List<JsonNode> calls = JsonLog.parse(List.of(call("00.100", "p1"), call("00.200", "p2"), call("00.300", "p3")))
        .events("call");

    assertThat(CallShare.perSecond(calls, "p1", FROM, 1)).containsExactly(33.3);
  }

  @Test
  void meanSkipsSecondsWithoutCallsAndStaysInRange() {
    List<Double> shares = Arrays.asList(4.0, null, 10.0, 30.0, 34.0);

    assertThat(CallShare.mean(shares, 0, 3)).isCloseTo(7.0, within(1e-9));
    assertThat(CallShare.mean(shares, 3, 99)).isCloseTo(32.0, within(1e-9));
    assertThat(CallShare.mean(shares, 1, 2)).isNaN();
  }

  private static String call(String secondsPastFrom, String... attempts) {
    String ts = secondsPastFrom.startsWith("09.") ? "2026-12-01T09:59:" + secondsPastFrom + "000Z"
        : "2026-12-01T10:00:" + secondsPastFrom + "000Z";
    StringBuilder a = new StringBuilder();
    for (String id : attempts) {
      a.append(a.length() == 0 ? "" : ",").append('"').append(id).append('"');
    }
    return "{\"event\":\"call\",\"ts\":\"" + ts + "\",\"ok\":true,\"attempts\":[" + a + "]}";
  }
}
