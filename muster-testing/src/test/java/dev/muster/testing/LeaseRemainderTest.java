package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class LeaseRemainderTest {
  private static final Duration TTL = Duration.ofSeconds(3);

  @Test
  void isTheLastRenewalAtOrBeforeTheFaultPlusTheTtlGrantedMinusTheFault() {
    JsonLog log = JsonLog.parse(List.of(
        "{\"event\":\"registered\",\"ts\":\"2026-11-29T21:30:00.000000Z\",\"detail\":\"\"}",
        "{\"event\":\"keepalive\",\"ts\":\"2026-11-29T21:30:01.000000Z\",\"detail\":\"ttl 5s\",\"ttl_s\":5}",
        "{\"event\":\"keepalive\",\"ts\":\"2026-11-29T21:30:02.000000Z\",\"detail\":\"ttl 3s\",\"ttl_s\":3}"));

    // the renewal at 1 s granted 5 s: it runs out at 6 s, 4.5 s after a fault at 1.5 s
    assertThat(LeaseRemainder.at(log, Instant.parse("2026-11-29T21:30:01.500Z"), TTL))
        .hasValue(Duration.ofMillis(4500));
    // a renewal logged at the fault's instant counts
    assertThat(LeaseRemainder.at(log, Instant.parse("2026-11-29T21:30:02Z"), TTL)).hasValue(TTL);
  }

  @Test
  void readsTheTtlFromItsFieldNeverFromTheHumanDetail() {
    JsonLog log = JsonLog.parse(List.of(
        "{\"event\":\"keepalive\",\"ts\":\"2026-11-29T21:30:01.000000Z\",\"detail\":\"ttl 9s\"}"));

    assertThat(LeaseRemainder.at(log, Instant.parse("2026-11-29T21:30:01Z"), TTL)).hasValue(TTL);
  }

  @Test
  void usesTheConfiguredTtlWhenTheRenewalDoesNotSayAndHasNoSplitWithoutARenewal() {
    JsonLog log = JsonLog.parse(List.of("{\"event\":\"registered\",\"ts\":\"2026-11-29T21:30:00.000000Z\"}"));

    assertThat(LeaseRemainder.at(log, Instant.parse("2026-11-29T21:30:00.250Z"), TTL))
        .hasValue(Duration.ofMillis(2750));
    assertThat(LeaseRemainder.at(log, Instant.parse("2026-11-29T21:29:59Z"), TTL)).isEmpty();
  }
}
