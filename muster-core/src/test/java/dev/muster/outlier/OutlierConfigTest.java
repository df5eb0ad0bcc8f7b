package dev.muster.outlier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class OutlierConfigTest {
  @Test
  void theDefaultsAreTheSpecs() {
    OutlierConfig config = OutlierConfig.defaults();

    assertThat(config.enabled()).isTrue();
    assertThat(config.consecutiveLocalOriginFailure()).isEqualTo(1);
    assertThat(config.consecutive5xx()).isEqualTo(5);
    assertThat(config.baseEjectionTime()).isEqualTo(Duration.ofSeconds(30));
    assertThat(config.maxEjectionTime()).isEqualTo(Duration.ofSeconds(300));
    assertThat(config.maxEjectionPercent()).isEqualTo(50);
  }

  @Test
  void toBuilderRoundTrips() {
    OutlierConfig lab = OutlierConfig.builder().baseEjectionTime(Duration.ofSeconds(2)).consecutive5xx(1).build();

    assertThat(lab.toBuilder().build()).isEqualTo(lab);
  }

  @Test
  void rejectsAMaxEjectionTimeBelowTheBaseNamingBoth() {
    assertThatThrownBy(() -> OutlierConfig.builder().maxEjectionTime(Duration.ofSeconds(10)).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("maxEjectionTime PT10S is invalid: use at least baseEjectionTime (PT30S)");
  }

  @Test
  void rejectsAPercentAbove100() {
    assertThatThrownBy(() -> OutlierConfig.builder().maxEjectionPercent(101).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("maxEjectionPercent 101 is invalid: use 0 to 100");
  }

  @Test
  void rejectsZeroThresholds() {
    assertThatThrownBy(() -> OutlierConfig.builder().consecutive5xx(0).build())
        .hasMessage("consecutive5xx 0 is invalid: use 1 or more responses");
    assertThatThrownBy(() -> OutlierConfig.builder().consecutiveLocalOriginFailure(0).build())
        .hasMessage("consecutiveLocalOriginFailure 0 is invalid: use 1 or more failures");
  }

  @Test
  void rejectsAMissingBaseEjectionTime() {
    assertThatThrownBy(() -> OutlierConfig.builder().baseEjectionTime(null).build())
        .hasMessage("baseEjectionTime is missing: use a positive duration");
  }
}
