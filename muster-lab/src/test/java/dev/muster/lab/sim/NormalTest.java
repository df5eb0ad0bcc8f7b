package dev.muster.lab.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;

/** The exact values the Monte Carlo is checked against, checked against published values of Φ. */
class NormalTest {
  @Test
  void upperTailMatchesPublishedValuesFromTheCentreFarIntoTheTail() {
    assertThat(Normal.upperTail(0)).isEqualTo(0.5);
    assertThat(Normal.upperTail(1)).isCloseTo(0.158655253931457, within(1e-14));
    assertThat(Normal.upperTail(-1)).isCloseTo(0.841344746068543, within(1e-14));
    assertThat(Normal.upperTail(2.5)).isCloseTo(0.00620966532577614, within(1e-15));
    assertThat(Normal.upperTail(3)).isCloseTo(0.00134989803163009, Percentage.withPercentage(1e-9));
    assertThat(Normal.upperTail(5)).isCloseTo(2.86651571879194e-7, Percentage.withPercentage(1e-9));
    assertThat(Normal.upperTail(8)).isCloseTo(6.22096057427178e-16, Percentage.withPercentage(1e-9));
  }

  @Test
  void theSeriesAndTheContinuedFractionAgreeWhereTheyMeet() {
    assertThat(Normal.upperTail(Math.nextDown(3.0))).isCloseTo(Normal.upperTail(3), Percentage.withPercentage(1e-9));
  }
}
