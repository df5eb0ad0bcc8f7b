package dev.muster.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RetryConfigTest {
  @Test
  void theDefaultsAreTheSpecs() {
    RetryConfig config = RetryConfig.defaults();

    assertThat(config.maxRetries()).isEqualTo(1);
    assertThat(config.attemptTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(config.budgetTtl()).isEqualTo(Duration.ofSeconds(10));
    assertThat(config.budgetPercentCanRetry()).isEqualTo(0.2);
    assertThat(config.budgetMinRetriesPerSecond()).isEqualTo(10);
  }

  @Test
  void toBuilderRoundTrips() {
    RetryConfig lab = RetryConfig.builder().attemptTimeout(Duration.ofMillis(300)).maxRetries(2).build();

    assertThat(lab.toBuilder().build()).isEqualTo(lab);
  }

  @Test
  void rejectsANegativeMaxRetries() {
    assertThatThrownBy(() -> RetryConfig.builder().maxRetries(-1).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("maxRetries -1 is invalid: use 0 to 10");
  }

  @Test
  void rejectsAZeroAttemptTimeout() {
    assertThatThrownBy(() -> RetryConfig.builder().attemptTimeout(Duration.ZERO).build())
        .hasMessage("attemptTimeout PT0S is invalid: use a positive duration");
  }

  @Test
  void rejectsAPercentAboveOne() {
    assertThatThrownBy(() -> RetryConfig.builder().budget(Duration.ofSeconds(10), 20, 10).build())
        .hasMessage("budgetPercentCanRetry 20.0 is invalid: use a share from 0.0 to 1.0");
  }
}
