package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.internal.Backoff;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The storm control's backoff: every wait is its window's top, so caches that failed together retry together. */
class NoJitterTest {
  @Test
  void everyDelayIsTheCeilingOfItsAttempt() {
    Backoff b = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), NegativeControls.NO_JITTER);
    for (int attempt = 0; attempt < 10; attempt++) {
      assertThat(b.delay(attempt)).isEqualTo(b.ceiling(attempt));
    }
    assertThat(b.delay(9)).isEqualTo(Duration.ofSeconds(5));
  }
}
