package dev.muster.lab.sim;

import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * Detection delay (a crash to the key's removal) over a model's samples, indexed as seed 003's Go indexes its
 * sorted slice: P50 is element n/2, P99 element ⌊0.99·n⌋; with the model's exact quantiles when it has them.
 *
 * @param exact the exact P50, P99 and supremum; empty when the model has no closed form (leader changes)
 */
public record DelayStats(Duration p50, Duration p99, Duration max, int samples, Optional<Exact> exact) {
  public DelayStats {
    Objects.requireNonNull(p50, "p50");
    Objects.requireNonNull(p99, "p99");
    Objects.requireNonNull(max, "max");
    Objects.requireNonNull(exact, "exact");
  }

  /** The exact quantiles; {@code max} is the supremum (seed 003's P99 of 15.0 s is 14.95 s rounded). */
  public record Exact(Duration p50, Duration p99, Duration max) {}

  /** The statistics of {@code seconds}, which this sorts in place. */
  static DelayStats of(double[] seconds, Optional<Exact> exact) {
    Arrays.sort(seconds);
    int n = seconds.length;
    return new DelayStats(Sims.duration(seconds[n / 2]), Sims.duration(seconds[(int) (n * 0.99)]),
        Sims.duration(seconds[n - 1]), n, exact);
  }

  /**
   * The exact quantiles of {@code offset + A·U₁ + B·U₂} with U₁, U₂ uniform on [0, 1): the median is the midpoint
   * (the density is symmetric); above the top, the tail is a triangle of width min(A, B), then a flat band, so
   * P(above top − x) is x²/(2AB) for x ≤ min(A, B) and (x − min/2)/max beyond.
   */
  static Exact ofUniformSum(double offset, double a, double b) {
    double wide = Math.max(a, b);
    double narrow = Math.min(a, b);
    double tail = 0.01;
    double x = narrow == 0 ? tail * wide
        : tail <= narrow / (2 * wide) ? Math.sqrt(2 * wide * narrow * tail) : tail * wide + narrow / 2;
    double top = offset + wide + narrow;
    return new Exact(Sims.duration(offset + (wide + narrow) / 2), Sims.duration(top - x), Sims.duration(top));
  }
}
