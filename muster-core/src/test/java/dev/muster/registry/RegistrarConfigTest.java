package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Derived values follow what they derive from; values that do not fit are refused, never changed. */
class RegistrarConfigTest {
  private static Duration s(long seconds) {
    return Duration.ofSeconds(seconds);
  }

  @Test
  void theDefaultsDeriveKeepaliveDrainAndRequestTimeoutFromTheTtl() {
    RegistrarConfig c = RegistrarConfig.defaults();
    assertThat(c.ttl()).isEqualTo(s(15));
    assertThat(c.keepaliveInterval()).isEqualTo(s(5));
    assertThat(c.drain()).isEqualTo(s(10));
    assertThat(c.requestTimeout()).isEqualTo(s(2));
  }

  @Test
  void aShorterTtlOnTheDefaultsMovesTheDerivedValuesWithIt() {
    RegistrarConfig c = RegistrarConfig.defaults().toBuilder().ttl(s(3)).build();
    assertThat(c.keepaliveInterval()).isEqualTo(s(1));
    assertThat(c.drain()).isEqualTo(s(2));
    assertThat(c.requestTimeout()).as("derived: the default 2 s, at most the keepalive").isEqualTo(s(1));
  }

  @Test
  void aValueSetExplicitlyStaysWhenTheTtlChanges() {
    RegistrarConfig c = RegistrarConfig.builder().ttl(s(30)).keepaliveInterval(s(4)).build()
        .toBuilder().ttl(s(60)).build();
    assertThat(c.keepaliveInterval()).isEqualTo(s(4));
    assertThat(c.drain()).as("still derived from the keepalive").isEqualTo(s(8));
  }

  @Test
  void aRequestTimeoutLongerThanTheKeepaliveIsRefusedNotClamped() {
    assertThatThrownBy(() -> RegistrarConfig.builder().ttl(s(3)).requestTimeout(s(2)).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("requestTimeout")
        .hasMessageContaining("2s")
        .hasMessageContaining("keepalive");
  }

  @Test
  void aKeepaliveThatDoesNotFitTheTtlIsRefusedNamingIt() {
    assertThatThrownBy(() -> RegistrarConfig.builder().ttl(s(3)).keepaliveInterval(s(3)).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("keepalive")
        .hasMessageContaining("3s");
  }

  @Test
  void toBuilderRoundTripsEveryValue() {
    RegistrarConfig c = RegistrarConfig.builder().ttl(s(20)).keepaliveInterval(s(6)).drain(s(1)).maxFailures(4)
        .startTimeout(s(7)).requestTimeout(Duration.ofMillis(1500)).retryBase(Duration.ofMillis(30))
        .shutdownHook(false).build();
    assertThat(c.toBuilder().build()).isEqualTo(c);
  }

  @Test
  void theSignaturesValidityIsTenMinutesOrFourTtlsAndAShorterOneIsRefused() {
    assertThat(RegistrarConfig.defaults().signatureValidity()).isEqualTo(Duration.ofMinutes(10));
    assertThat(RegistrarConfig.builder().ttl(s(300)).build().signatureValidity()).isEqualTo(Duration.ofMinutes(20));
    assertThat(RegistrarConfig.defaults().toBuilder().ttl(s(300)).build().signatureValidity())
        .as("derived, so it follows the TTL").isEqualTo(Duration.ofMinutes(20));
    RegistrarConfig set = RegistrarConfig.builder().signatureValidity(Duration.ofMinutes(3)).signV1Too(true).build();
    assertThat(set.toBuilder().build()).isEqualTo(set);

    assertThatThrownBy(() -> RegistrarConfig.builder().signatureValidity(s(59)).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("signatureValidity").hasMessageContaining("at least 1 min");
    assertThatThrownBy(() -> RegistrarConfig.builder().ttl(s(30)).signatureValidity(s(100)).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("4 × the TTL (120s)");
  }
}
