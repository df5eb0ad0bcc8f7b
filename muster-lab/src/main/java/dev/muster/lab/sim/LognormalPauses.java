package dev.muster.lab.sim;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How long a process stops (GC, VM migration, a network stall): lognormal, {@code median · exp(sigma · Z)}, as
 * seed 003 draws it. Times in the sampling methods are seconds as doubles: they run millions of times per row.
 *
 * @param median the median pause (the seed's 0.5 s)
 * @param sigma the standard deviation of the pause's logarithm (the seed's 1.0 and 1.5); larger is heavier-tailed
 */
public record LognormalPauses(Duration median, double sigma) {
  public LognormalPauses {
    Objects.requireNonNull(median, "median");
    if (median.isNegative() || median.isZero()) {
      throw Sims.invalid("--pause-median", median, "use a positive duration, e.g. 500ms");
    }
    if (!(sigma > 0) || Double.isInfinite(sigma)) {
      throw Sims.invalid("--sigma", sigma, "use a number above 0, e.g. 1.0");
    }
  }

  /** One pause, in seconds; draws exactly one Gaussian from {@code random}. */
  double sampleSeconds(RandomGenerator random) {
    return Sims.seconds(median) * Math.exp(sigma * random.nextGaussian());
  }

  /** P(pause > {@code seconds}), exactly. */
  double survival(double seconds) {
    if (seconds <= 0) {
      return 1;
    }
    return Normal.upperTail(Math.log(seconds / Sims.seconds(median)) / sigma);
  }
}
