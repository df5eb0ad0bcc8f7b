package dev.muster.lab;

import java.time.Duration;

/**
 * What one scenario measured (its {@link Figures}, computed from the logs), whether its invariant held, the
 * invariant in words, the seed's figures to compare with, and how long it took.
 */
public record ScenarioResult(String name, boolean passed, Figures figures, String invariant, String seed,
    Duration elapsed) {

  public static ScenarioResult of(Scenario s, boolean passed, Figures figures, String invariant) {
    return new ScenarioResult(s.name(), passed, figures, invariant, s.seed(), Duration.ZERO);
  }

  public static ScenarioResult of(Scenario s, boolean passed, String figures, String invariant) {
    return of(s, passed, Figures.of(figures), invariant);
  }

  ScenarioResult took(Duration d) {
    return new ScenarioResult(name, passed, figures, invariant, seed, d);
  }

  static ScenarioResult failed(Scenario s, String why, Duration d) {
    return new ScenarioResult(s.name(), false, Figures.of("did not complete: " + why), "", s.seed(), d);
  }
}
