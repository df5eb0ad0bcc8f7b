package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private final Backoff backoff = Backoff.defaults(new Random(7));

  private static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }

  @Test
  void ceilingsDoubleFromTheBaseUpToTheCap() {
    List<Duration> ceilings = new ArrayList<>();
    for (int attempt = 0; attempt < 10; attempt++) {
      ceilings.add(backoff.ceiling(attempt));
    }

    assertThat(ceilings).containsExactly(ms(100), ms(200), ms(400), ms(800), ms(1600), ms(3200), ms(5000),
        ms(5000), ms(5000), ms(5000));
  }

  @Test
  void theCeilingStaysAtTheCapForAnyNumberOfAttempts() {
    assertThat(backoff.ceiling(31)).isEqualTo(ms(5000));
    assertThat(backoff.ceiling(64)).isEqualTo(ms(5000));
    assertThat(backoff.ceiling(Integer.MAX_VALUE)).isEqualTo(ms(5000));
  }

  @Test
  void aHugeBaseDoesNotOverflow() {
    Backoff days = new Backoff(Duration.ofDays(1000), Duration.ofDays(100_000), new Random(1));

    assertThat(days.ceiling(40)).isEqualTo(Duration.ofDays(100_000));
  }

  @Test
  void everyDelayIsWithinZeroAndItsCeiling() {
    for (int attempt = 0; attempt < 12; attempt++) {
      for (int i = 0; i < 200; i++) {
        assertThat(backoff.delay(attempt)).isBetween(Duration.ZERO, backoff.ceiling(attempt));
      }
    }
  }

  @Test
  void delaysSpreadOverTheWholeWindow() {
    Duration min = Duration.ofDays(1);
    Duration max = Duration.ZERO;
    for (int i = 0; i < 2_000; i++) {
      Duration d = backoff.delay(6);
      min = d.compareTo(min) < 0 ? d : min;
      max = d.compareTo(max) > 0 ? d : max;
    }

    assertThat(min).isLessThan(ms(250));
    assertThat(max).isGreaterThan(ms(4750));
  }

  @Test
  void theSameSeedGivesTheSameDelays() {
    Backoff a = Backoff.defaults(new Random(99));
    Backoff b = Backoff.defaults(new Random(99));

    for (int attempt = 0; attempt < 10; attempt++) {
      assertThat(a.delay(attempt)).isEqualTo(b.delay(attempt));
    }
  }

  @Test
  void rejectsAZeroOrNegativeBase() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, ms(5000), new Random()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT0S");
    assertThatThrownBy(() -> new Backoff(ms(-1), ms(5000), new Random()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-0.001");
  }

  @Test
  void rejectsACapBelowTheBase() {
    assertThatThrownBy(() -> new Backoff(ms(200), ms(100), new Random()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("PT0.1S").hasMessageContaining("PT0.2S");
  }

  @Test
  void acceptsACapEqualToTheBase() {
    Backoff flat = new Backoff(ms(100), ms(100), new Random(3));

    assertThat(flat.ceiling(0)).isEqualTo(ms(100));
    assertThat(flat.ceiling(5)).isEqualTo(ms(100));
  }

  @Test
  void rejectsMissingArguments() {
    assertThatThrownBy(() -> new Backoff(null, ms(5000), new Random()))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("base");
    assertThatThrownBy(() -> new Backoff(ms(100), null, new Random()))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("cap");
    assertThatThrownBy(() -> new Backoff(ms(100), ms(5000), null))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("random");
  }

  @Test
  void rejectsANegativeAttempt() {
    assertThatThrownBy(() -> backoff.ceiling(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
    assertThatThrownBy(() -> backoff.delay(-1)).isInstanceOf(IllegalArgumentException.class);
  }
}
