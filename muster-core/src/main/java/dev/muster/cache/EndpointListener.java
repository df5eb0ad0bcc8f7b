package dev.muster.cache;

import java.time.Duration;
import java.time.Instant;

/**
 * Receives an {@link EndpointCache}'s changes. All methods are called on the cache's single notifier thread, in
 * revision order, one call at a time; they must be fast and must not throw (an exception is logged and ignored).
 */
public interface EndpointListener {
  /** A new set was published; {@code delta} says what changed and why. */
  void onChange(EndpointSet set, EndpointDelta delta);

  /** The cache lost etcd and keeps serving {@code set} (stale-while-error). */
  default void onStale(EndpointSet set, Instant since, String reason) {}

  /** The cache is watching etcd again after being stale for {@code staleFor}. */
  default void onRecovered(EndpointSet set, Duration staleFor) {}

  /**
   * The cache stopped for good: etcd refused it (see {@link EndpointCache#failure()}). {@code set} is the last set,
   * still served, and nothing follows.
   */
  default void onFailed(EndpointSet set, dev.muster.MusterException why) {}
}
