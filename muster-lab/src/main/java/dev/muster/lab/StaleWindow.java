package dev.muster.lab;

/**
 * One stale window a scenario measured: the fault (SIGKILL, SIGSTOP) → the watcher's first set without the
 * provider, in milliseconds, and where the provider logged its renewals its split by muster-testing's
 * {@link dev.muster.testing.LeaseRemainder} rule: lease remainder + detection/delivery = window.
 *
 * @param windowMs fault → removal at the watcher
 * @param leaseRemainderMs fault → last renewal before it + the TTL granted; null when no renewal was logged
 */
public record StaleWindow(long windowMs, Long leaseRemainderMs) {

  public static StaleWindow split(long windowMs, long leaseRemainderMs) {
    return new StaleWindow(windowMs, leaseRemainderMs);
  }

  public static StaleWindow unsplit(long windowMs) {
    return new StaleWindow(windowMs, null);
  }

  public boolean isSplit() {
    return leaseRemainderMs != null;
  }

  /** Expiry → removal (etcd's expiry loop, the delete, the watch); null when not split. */
  public Long detectionMs() {
    return isSplit() ? windowMs - leaseRemainderMs : null;
  }

  /** {@code W = L + D}, or {@code W} when not split: how output.txt writes it. */
  @Override
  public String toString() {
    return isSplit() ? windowMs + " = " + leaseRemainderMs + " + " + detectionMs() : Long.toString(windowMs);
  }
}
