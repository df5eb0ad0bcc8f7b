package dev.muster.lab.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The exact quantiles of a sum of two uniforms, against a large sample of it, in both of the tail's shapes. */
class DelayStatsTest {
  @Test
  void exactQuantilesOfTwoUniformsMatchASampleWhetherTheTopPercentIsTriangleOrBand() {
    for (double[] widths : new double[][] {{5, 0.5}, {0.5, 5}, {60, 0.5}, {3, 0}}) {
      DelayStats.Exact exact = DelayStats.ofUniformSum(10, widths[0], widths[1]);
      SplittableRandom r = new SplittableRandom(1);
      double[] xs = new double[400_000];
      Arrays.setAll(xs, i -> 10 + widths[0] * r.nextDouble() + widths[1] * r.nextDouble());
      DelayStats sampled = DelayStats.of(xs, java.util.Optional.of(exact));
      String what = Arrays.toString(widths);
      double error = 0.01 + 0.002 * Math.max(widths[0], widths[1]); // ~4 standard errors of a quantile of 400,000
      assertThat(Sims.seconds(sampled.p50())).as(what).isCloseTo(Sims.seconds(exact.p50()), within(error));
      assertThat(Sims.seconds(sampled.p99())).as(what).isCloseTo(Sims.seconds(exact.p99()), within(error));
      assertThat(Sims.seconds(sampled.max())).as(what).isLessThanOrEqualTo(Sims.seconds(exact.max()));
    }
  }
}
