package dev.muster.lab.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What {@code muster sim ttl --validate} found: every pause with its prediction and outcome, the counts, and the
 * pauses whose outcome differs from the model's prediction, split by {@link TtlValidation#TOLERANCE}. Immutable.
 *
 * @param startup from the start until every provider had registered
 * @param pausing from the first pause until the last one had settled
 */
public record ValidationReport(ValidationConfig config, List<PauseTrial> trials, Duration startup,
    Duration pausing) {
  static final String CSV_HEADER = "provider,round,phase_s,pause_s,boundary_s,margin_s,predicted_removed,"
      + "observed_removed,measured_remaining_s,measured_pause_s,measured_margin_s,stopped,resumed";

  public ValidationReport {
    Objects.requireNonNull(config, "config");
    trials = trials.stream().sorted(Comparator.comparingInt((PauseTrial t) -> number(t.planned().provider()))
        .thenComparingInt(t -> t.planned().round())).toList();
    Objects.requireNonNull(startup, "startup");
    Objects.requireNonNull(pausing, "pausing");
  }

  public long observedRemovals() {
    return trials.stream().filter(PauseTrial::observedRemoval).count();
  }

  public long predictedRemovals() {
    return trials.stream().filter(t -> t.planned().predictedRemoval()).count();
  }

  public List<PauseTrial> disagreements() {
    return trials.stream().filter(t -> !t.agrees()).toList();
  }

  /** Disagreements farther than the tolerance from the boundary: these make the run fail. */
  public List<PauseTrial> contradictions() {
    return trials.stream().filter(t -> t.contradicts(TtlValidation.TOLERANCE)).toList();
  }

  public String text() {
    StringBuilder sb = new StringBuilder();
    sb.append(f("registered in %.1f s, paused and settled in %.1f s%n%n", startup.toMillis() / 1000.0,
        pausing.toMillis() / 1000.0));
    sb.append(f("%-8s %-5s %-7s %-7s %-9s %-8s %-9s %-9s  %s%n", "provider", "round", "phase", "pause", "TTL-phase",
        "margin", "predicted", "observed", "measured: left   pause    margin"));
    for (PauseTrial t : trials) {
      sb.append(f("%-8s %-5d %-7s %-7s %-9s %-8s %-9s %-9s            %-7s  %-7s  %s%s%n", t.planned().provider(),
          t.planned().round(), s(t.planned().phase()), s(t.planned().pause()), s(t.boundary()), signed(t.margin()),
          verdict(t.planned().predictedRemoval()), verdict(t.observedRemoval()), s(t.measuredRemaining()),
          s(t.measuredPause()), signed(t.measuredMargin()), t.agrees() ? "" : "   <- differs"));
    }
    double expected = config.removalProbability() * trials.size();
    sb.append(f("%nremoved: observed %d of %d pauses; predicted %d (the model's rule on the sampled phases and"
        + " pauses), %d on the measured ones; the model's exact P(removal) %.3f, i.e. %.1f of %d expected%n",
        observedRemovals(), trials.size(), predictedRemovals(),
        trials.stream().filter(PauseTrial::measuredPrediction).count(), config.removalProbability(), expected,
        trials.size()));
    List<PauseTrial> near = new ArrayList<>(disagreements());
    near.removeAll(contradictions());
    sb.append(f("disagreements within ±%s of the boundary (not held to the model): %d%n",
        Sims.format(TtlValidation.TOLERANCE), near.size()));
    sb.append(f("contradictions (a disagreement farther from the boundary): %d%s%n", contradictions().size(),
        contradictions().isEmpty() ? ", the model holds" : ""));
    for (PauseTrial t : disagreements()) {
      sb.append(f("  %s round %d: phase %s, pause %s, margin %s: predicted %s, observed %s (measured margin %s)%n",
          t.planned().provider(), t.planned().round(), s(t.planned().phase()), s(t.planned().pause()),
          signed(t.margin()), verdict(t.planned().predictedRemoval()), verdict(t.observedRemoval()),
          signed(t.measuredMargin())));
    }
    return sb.toString();
  }

  public String csv() {
    StringBuilder sb = new StringBuilder(CSV_HEADER).append('\n');
    for (PauseTrial t : trials) {
      sb.append(String.join(",", t.planned().provider(), Integer.toString(t.planned().round()),
          d(t.planned().phase()), d(t.planned().pause()), d(t.boundary()), d(t.margin()),
          Boolean.toString(t.planned().predictedRemoval()), Boolean.toString(t.observedRemoval()),
          d(t.measuredRemaining()), d(t.measuredPause()), d(t.measuredMargin()), t.stopped().toString(),
          t.resumed().toString())).append('\n');
    }
    return sb.toString();
  }

  private static int number(String provider) {
    return Integer.parseInt(provider.substring(1));
  }

  private static String verdict(boolean removed) {
    return removed ? "removed" : "kept";
  }

  private static String s(Duration d) {
    return f("%.3fs", Sims.seconds(d));
  }

  private static String signed(Duration d) {
    return f("%+.3fs", Sims.seconds(d));
  }

  private static String d(Duration d) {
    return f("%.4f", Sims.seconds(d));
  }

  private static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
