package dev.muster.call;

import dev.muster.outlier.Outcome;

/**
 * Where the call engine reports what it did, one call per event. {@link #noop()} drops everything;
 * a {@link dev.muster.client.MusterClient} given a Micrometer {@code MeterRegistry} counts into it.
 *
 * <p>Implementations must be thread-safe, fast and must not throw: methods are called on whichever thread runs or
 * completes an attempt, including transport threads.
 */
public interface CallMetrics {
  /** An endpoint was picked for an attempt: the first one, or a retry the budget allowed. */
  default void picked() {}

  /** A call found no endpoint at all and made no attempt. */
  default void noEndpoint() {}

  /** An attempt started. */
  default void attempted() {}

  /** An attempt failed with {@code kind} ({@code LOCAL_ORIGIN_FAILURE} or {@code HTTP_5XX}). */
  default void failed(Outcome kind) {}

  /** An attempt's outcome ejected its endpoint. */
  default void ejected() {}

  /** A retry started. */
  default void retried() {}

  /** The retry budget refused a retry that was wanted and possible. */
  default void budgetRefused() {}

  /** Metrics that go nowhere. */
  static CallMetrics noop() {
    return Noop.INSTANCE;
  }
}

/** The instance behind {@link CallMetrics#noop()}. */
enum Noop implements CallMetrics {
  INSTANCE
}
