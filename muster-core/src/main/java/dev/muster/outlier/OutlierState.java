package dev.muster.outlier;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One endpoint's ejection bookkeeping: its consecutive-failure counts and whether, until when and how many times in a
 * row it has been ejected. The balancer keeps one per endpoint for as long as the endpoint stays in the set.
 *
 * <p>Thread-safe. The counts are atomics updated by whichever thread records an outcome; the ejection fields are
 * written only by {@link OutlierDetector} under its lock and published through volatile fields, so the getters may be
 * called from any thread without a lock.
 */
public final class OutlierState {
  final AtomicInteger localOriginFailures = new AtomicInteger();
  final AtomicInteger failures5xx = new AtomicInteger();

  // Written under the detector's lock only.
  private volatile boolean ejected;
  private volatile long ejectedUntilNanos;
  private volatile int timesEjected;
  private long unejectedAtNanos;
  private boolean everUnejected;

  /** Local-origin failures (refused, reset, attempt timeout) since the last success or 5xx. */
  public int consecutiveLocalOriginFailures() {
    return localOriginFailures.get();
  }

  /** 5xx responses since the last success. */
  public int consecutive5xx() {
    return failures5xx.get();
  }

  /** True from an ejection until the first pick after {@link #ejectedUntilNanos()} un-ejects it. */
  public boolean isEjected() {
    return ejected;
  }

  /** When the current ejection ends, on the detector's nano ticker; meaningless while not ejected. */
  public long ejectedUntilNanos() {
    return ejectedUntilNanos;
  }

  /** The multiplier of the last ejection: ejections in a row, less one per base ejection time spent healthy. */
  public int timesEjected() {
    return timesEjected;
  }

  void resetCounts() {
    localOriginFailures.set(0);
    failures5xx.set(0);
  }

  /** Caller holds the detector's lock. */
  void eject(long untilNanos, int times) {
    timesEjected = times;
    ejectedUntilNanos = untilNanos;
    resetCounts();
    ejected = true;
  }

  /** Caller holds the detector's lock. The host counts as healthy from the moment its ejection ended. */
  void uneject() {
    ejected = false;
    unejectedAtNanos = ejectedUntilNanos;
    everUnejected = true;
    resetCounts();
  }

  /**
   * The multiplier before the next ejection: {@link #timesEjected()} less one for each {@code baseNanos} spent
   * un-ejected. Caller holds the detector's lock.
   */
  int decayedTimes(long nowNanos, long baseNanos) {
    int times = timesEjected;
    if (times == 0 || !everUnejected) {
      return times;
    }
    long healthySteps = Math.max(0, nowNanos - unejectedAtNanos) / baseNanos;
    return (int) Math.max(0, times - healthySteps);
  }

  @Override
  public String toString() {
    return ejected
        ? "OutlierState[ejected x" + timesEjected + "]"
        : "OutlierState[" + localOriginFailures.get() + " local-origin, " + failures5xx.get() + " 5xx in a row]";
  }
}
