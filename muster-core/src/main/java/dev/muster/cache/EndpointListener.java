package dev.muster.cache;

import java.time.Duration;
import java.time.Instant;

/**
 * Receives an {@link EndpointCache}'s changes. All methods are called by the cache's notifier, in revision order,
 * one call at a time, never two at once (on the etcd adapter: on a thread of the process's shared delivery pool,
 * not always the same one; each call sees what the one before it did). They must be fast, must not block (a blocked
 * listener holds one of the pool's few threads) and must not throw (an exception is logged and ignored). A listener
 * that must block belongs on a cache with a {@link CacheConfig#listenerExecutor()}: its calls then run on that
 * executor's threads, in the same order and still one at a time, and a blocked one delays only its own cache.
 *
 * <p>First comes exactly one {@link EndpointDelta.Kind#SNAPSHOT}, then every later change, each reflected once. A
 * listener that falls more than 8 publications behind receives the newest set with the combined delta instead of
 * each step; it is never handed an older set than one it already had, and a SNAPSHOT is never merged away.
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
