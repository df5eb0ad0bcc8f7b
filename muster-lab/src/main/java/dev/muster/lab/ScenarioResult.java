package dev.muster.lab;

import java.time.Duration;

/**
 * What one scenario measured: its figures as one line (computed from the logs), whether its invariant held, and
 * the invariant in words.
 */
public record ScenarioResult(String name, boolean passed, String figures, String invariant, String seed,
    Duration elapsed) {

  public static ScenarioResult of(Scenario s, boolean passed, String figures, String invariant) {
    return new ScenarioResult(s.name(), passed, figures, invariant, s.seed(), Duration.ZERO);
  }

  ScenarioResult took(Duration d) {
    return new ScenarioResult(name, passed, figures, invariant, seed, d);
  }

  static ScenarioResult failed(Scenario s, String why, Duration d) {
    return new ScenarioResult(s.name(), false, "did not complete: " + why, "", s.seed(), d);
  }
}
