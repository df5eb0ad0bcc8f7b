package dev.muster.lab.sim;

/**
 * The standard normal distribution's upper tail, for the exact values the Monte Carlo is checked against. Below
 * 3 it is 1/2 minus Marsaglia's Taylor series of Φ (absolute error ~1e-16, "Evaluating the Normal Distribution",
 * J. Stat. Software 11(4), 2004); from 3 on, the Laplace continued fraction of the Mills ratio, which keeps its
 * relative accuracy far into the tail (the seed's rarest row is Q(4.79) ≈ 8.5e-7). Stateless.
 */
final class Normal {
  private static final double LOG_SQRT_2PI = 0.91893853320467274178;
  private static final int FRACTION_TERMS = 200;

  private Normal() {}

  /** P(Z > z) for a standard normal Z. */
  static double upperTail(double z) {
    if (Double.isNaN(z)) {
      throw new IllegalArgumentException("z is NaN");
    }
    if (z < 0) {
      return 1 - upperTail(-z);
    }
    if (z < 3) {
      return 0.5 - series(z);
    }
    // Q(z) = φ(z) / (z + 1/(z + 2/(z + 3/(z + ...)))), evaluated from the far end.
    double fraction = z;
    for (int k = FRACTION_TERMS; k >= 1; k--) {
      fraction = z + k / fraction;
    }
    return Math.exp(-0.5 * z * z - LOG_SQRT_2PI) / fraction;
  }

  /** Φ(z) − 1/2 = φ(z) · (z + z³/3 + z⁵/(3·5) + ...). */
  private static double series(double z) {
    double sum = z;
    double term = z;
    double q = z * z;
    for (int i = 3; ; i += 2) {
      term *= q / i;
      double next = sum + term;
      if (next == sum) {
        break;
      }
      sum = next;
    }
    return sum * Math.exp(-0.5 * q - LOG_SQRT_2PI);
  }
}
