package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonLogTest {
  private static final Instant T0 = Instant.parse("2026-12-04T10:00:00Z");
  private static final Duration QUIET = Duration.ofSeconds(2);

  private static String line(String event, String instance, long atMillis) {
    return "{\"ts\":\"" + JsonLog.ts(T0.plusMillis(atMillis)) + "\",\"event\":\"" + event + "\""
        + (instance == null ? "" : ",\"instance\":\"" + instance + "\"") + "}";
  }

  @Test
  void probesSettleOnceNoEndpointIsDownAndNoVerdictCameForTheQuietPeriodSinceTheFirstLine() {
    JsonLog log = JsonLog.parse(List.of(line("watch", null, 0), line("call", null, 500)));

    assertThat(log.probesSettled(QUIET, T0.plusMillis(1999))).as("probed for less than 2 s").isFalse();
    assertThat(log.probesSettled(QUIET, T0.plusMillis(2000))).isTrue();
    assertThat(JsonLog.parse(List.of()).probesSettled(QUIET, T0.plusSeconds(60))).as("nothing printed yet").isFalse();
  }

  @Test
  void anEndpointProbedDownWithoutALaterProbeUpIsNotSettledHoweverLongAgo() {
    JsonLog down = JsonLog.parse(List.of(line("watch", null, 0), line("probe_down", "p1", 100),
        line("probe_down", "p2", 200), line("probe_up", "p2", 300)));
    JsonLog recovered = JsonLog.parse(List.of(line("watch", null, 0), line("probe_down", "p1", 100),
        line("probe_up", "p1", 1000)));

    assertThat(down.probesSettled(QUIET, T0.plusSeconds(60))).isFalse();
    assertThat(recovered.probesSettled(QUIET, T0.plusMillis(2999))).as("quiet counts from the last verdict")
        .isFalse();
    assertThat(recovered.probesSettled(QUIET, T0.plusMillis(3000))).isTrue();
  }

  @Test
  void aPanicVerdictRestartsTheQuietPeriod() {
    JsonLog log = JsonLog.parse(List.of(line("watch", null, 0), line("panic_on", null, 5000),
        line("panic_off", null, 6000)));

    assertThat(log.probesSettled(QUIET, T0.plusMillis(7999))).isFalse();
    assertThat(log.probesSettled(QUIET, T0.plusMillis(8000))).isTrue();
  }
}
