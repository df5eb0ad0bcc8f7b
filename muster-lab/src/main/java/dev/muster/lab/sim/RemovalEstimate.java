package dev.muster.lab.sim;

import java.util.OptionalDouble;

/**
 * False removals per day from one Monte Carlo row: {@code hits} of {@code samples} pauses removed a live instance,
 * scaled by instances × pauses per day; with its standard error (binomial), and the exact value when the model has
 * one in closed form.
 *
 * @param hits pauses that removed the instance
 * @param samples pauses drawn
 * @param pausesPerDay instances × pauses per instance per day
 * @param exactProbability P(a pause removes the instance), exactly; empty when the model has no closed form
 */
public record RemovalEstimate(long hits, long samples, double pausesPerDay, OptionalDouble exactProbability) {
  public RemovalEstimate {
    if (samples < 1 || hits < 0 || hits > samples) {
      throw new IllegalArgumentException(hits + " hits of " + samples + " samples");
    }
  }

  public double probability() {
    return (double) hits / samples;
  }

  public double perDay() {
    return pausesPerDay * probability();
  }

  /** Seed 003's year: the day's figure × 365. */
  public double perYear() {
    return perDay() * 365;
  }

  /** The Monte Carlo standard error of {@link #perDay()}: pauses per day × √(p̂(1 − p̂)/n). */
  public double standardErrorPerDay() {
    double p = probability();
    return pausesPerDay * Math.sqrt(p * (1 - p) / samples);
  }

  /**
   * With no hit the standard error is 0 and says nothing; the rule of three does: the rate is below 3/n at 95 %.
   * This is that bound per day.
   */
  public double upperBound95PerDay() {
    return pausesPerDay * 3.0 / samples;
  }

  public OptionalDouble exactPerDay() {
    return exactProbability.isPresent() ? OptionalDouble.of(pausesPerDay * exactProbability.getAsDouble())
        : OptionalDouble.empty();
  }
}
