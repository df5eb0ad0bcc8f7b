package dev.muster.lab.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad input is refused before any sampling, with the flag and the value in the message. */
class TtlSimConfigTest {
  @Test
  void theDefaultsAreTheSeedsParameters() {
    TtlSimConfig c = TtlSimConfig.defaults();
    assertThat(c.heartbeat()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.ttls()).containsExactly(Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofSeconds(60));
    assertThat(c.instances()).isEqualTo(1000);
    assertThat(c.pausesPerDay()).isEqualTo(2);
    assertThat(c.pauseMedian()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.sigmas()).containsExactly(1.0, 1.5);
    assertThat(c.samples()).isEqualTo(2_000_000);
    assertThat(c.delaySamples()).isEqualTo(100_000);
    assertThat(c.keepalive()).isEmpty();
    assertThat(c.toBuilder().build()).isEqualTo(c);
  }

  @Test
  void aTtlThatIsZeroOrNotAboveTheHeartbeatIsRefused() {
    assertRefused(TtlSimConfig.builder().ttls(List.of(Duration.ZERO)), "--ttl \"0s\" is invalid: use a positive");
    assertRefused(TtlSimConfig.builder().ttls(List.of(Duration.ofSeconds(15), Duration.ofSeconds(5))),
        "--ttl \"5s\" is invalid: use a TTL above the heartbeat (5s)");
    assertRefused(TtlSimConfig.builder().ttls(List.of()), "--ttl");
  }

  @Test
  void aKeepaliveNotBelowEveryTtlIsRefused() {
    assertRefused(TtlSimConfig.builder().keepalive(Duration.ofSeconds(15)), "--keepalive \"15s\" is invalid: use a"
        + " keepalive below every TTL (15s)");
  }

  @Test
  void sigmaInstancesMedianAndSampleSizesMustMakeSense() {
    assertRefused(TtlSimConfig.builder().sigmas(List.of(1.0, 0.0)), "--sigma 0.0 is invalid: use a number above 0");
    assertRefused(TtlSimConfig.builder().sigmas(List.of(-1.0)), "--sigma -1.0 is invalid");
    assertRefused(TtlSimConfig.builder().instances(0), "--instances 0 is invalid: use 1 or more");
    assertRefused(TtlSimConfig.builder().pauseMedian(Duration.ZERO), "--pause-median \"0s\" is invalid");
    assertRefused(TtlSimConfig.builder().pausesPerDay(-1), "--pauses-per-day -1.0 is invalid: use 0 or more");
    assertRefused(TtlSimConfig.builder().leaderChangesPerDay(Double.NaN), "--leader-changes-per-day NaN");
    assertRefused(TtlSimConfig.builder().samples(0), "--samples 0 is invalid");
    assertRefused(TtlSimConfig.builder().delaySamples(99), "--delay-samples 99 is invalid: use 100 or more");
  }

  private static void assertRefused(TtlSimConfig.Builder builder, String message) {
    assertThatThrownBy(builder::build).isInstanceOf(InvalidInputException.class).hasMessageContaining(message);
  }
}
