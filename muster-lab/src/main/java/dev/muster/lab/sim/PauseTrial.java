package dev.muster.lab.sim;

import dev.muster.lab.sim.ValidationConfig.PlannedPause;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One pause inflicted on a real provider: what the model drew and predicted, when the signals went, what the
 * provider's log says was left of its lease at the stop, and whether it lost the lease.
 *
 * @param planned the sampled phase and length, and the model's prediction from them
 * @param boundary {@code TTL − phase}: the longest pause the lease survives, in the model
 * @param stopped when {@code kill -STOP} had returned
 * @param resumed when {@code kill -CONT} had returned
 * @param measuredRemaining the last renewal in the provider's log before {@code stopped}, + the TTL granted, −
 *     {@code stopped} (muster-testing's {@link dev.muster.testing.LeaseRemainder})
 * @param observedRemoval the provider logged {@code lease_lost} after the stop, before the next pause
 */
public record PauseTrial(PlannedPause planned, Duration boundary, Instant stopped, Instant resumed,
    Duration measuredRemaining, boolean observedRemoval) {
  public PauseTrial {
    Objects.requireNonNull(planned, "planned");
    Objects.requireNonNull(boundary, "boundary");
    Objects.requireNonNull(stopped, "stopped");
    Objects.requireNonNull(resumed, "resumed");
    Objects.requireNonNull(measuredRemaining, "measuredRemaining");
  }

  /** How far the sampled pause is beyond its boundary (negative: short of it). */
  public Duration margin() {
    return planned.pause().minus(boundary);
  }

  public Duration measuredPause() {
    return Duration.between(stopped, resumed);
  }

  /** The measured pause beyond the measured remainder of the lease. */
  public Duration measuredMargin() {
    return measuredPause().minus(measuredRemaining);
  }

  /** The model's rule on the measured phase and pause. */
  public boolean measuredPrediction() {
    Duration m = measuredMargin();
    return !m.isNegative() && !m.isZero();
  }

  public boolean agrees() {
    return planned.predictedRemoval() == observedRemoval;
  }

  /** A disagreement farther than {@code tolerance} from the boundary: the model, not the timing, is wrong. */
  public boolean contradicts(Duration tolerance) {
    return !agrees() && margin().abs().compareTo(tolerance) > 0;
  }
}
