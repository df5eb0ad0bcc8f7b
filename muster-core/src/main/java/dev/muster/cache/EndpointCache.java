package dev.muster.cache;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A consumer's local copy of one service's endpoints, kept equal to "a snapshot at revision R plus every later
 * event" and served while the registry is unreachable (stale-while-error).
 *
 * <p>Thread-safe. {@link #current()} is a volatile read of an immutable set: no lock, no allocation. Listeners are
 * called by the cache's notifier: one call at a time, in revision order, each seeing what the one before it did. The
 * notifier has no thread of its own: its calls run on a thread of a shared delivery pool (on the etcd adapter, the
 * process's {@code muster-delivery-N} threads, not always the same one), or on the threads of
 * {@link CacheConfig#listenerExecutor()} when it is set ({@link EndpointListener}).
 */
public interface EndpointCache extends AutoCloseable {
  /** The last published set ({@link EndpointSet#EMPTY} before the first snapshot). */
  EndpointSet current();

  /** The revision of {@link #current()}. */
  default long revision() {
    return current().revision();
  }

  /** The configuration the cache was opened with, when it has one (a test's hand-fed cache may not). */
  default Optional<CacheConfig> config() {
    return Optional.empty();
  }

  /** True while etcd is unreachable or the watch is broken: {@link #current()} may be out of date. */
  boolean isStale();

  /** When the cache became stale, if it is. */
  Optional<Instant> staleSince();

  /** Time since the last event or progress notification from etcd (how fresh the evidence is). */
  Duration lastEventAge();

  /** How many times the set was replaced by a full range after the first snapshot. */
  long resyncCount();

  /**
   * How many times the cache compared its set with etcd's keys at its own revision ({@link CacheConfig#auditInterval};
   * docs/design-audit.md). 0 for a cache that does not audit.
   */
  default long auditCount() {
    return 0;
  }

  /**
   * How many of those audits found the set different from etcd's (a lost event: etcd 17529) and repaired it with a
   * full resync, counted in {@link #resyncCount()} too.
   */
  default long auditDifferenceCount() {
    return 0;
  }

  /** How many sets this cache has published (each one revision's changes applied, or a resync's set). */
  default long changeCount() {
    return 0;
  }

  /** How many times the set was loaded from the disk snapshot ({@link CacheConfig#snapshotFile}). */
  default long snapshotLoadCount() {
    return 0;
  }

  /** Publications queued for the listeners and not yet started (bounded: listeners lag by merges beyond it). */
  default int listenerBacklog() {
    return 0;
  }

  /** Values excluded because they did not decode. */
  long malformedCount();

  /**
   * Records excluded because they did not verify against {@link CacheConfig#trustedKeys()}: unsigned, signed by a
   * key not trusted for the service, or with a signature that does not match their key, lease and value
   * ({@link dev.muster.sign.UnverifiedRecordException.Reason}). Always 0 when no keys are trusted. A value that
   * does not decode is counted in {@link #malformedCount()} instead, never in both.
   */
  long unverifiedCount();

  /**
   * Why the cache stopped for good, if it did: etcd refused its user read access to the prefix
   * ({@link dev.muster.ErrorCode#PERMISSION_DENIED}) or refused its credentials
   * ({@link dev.muster.ErrorCode#AUTHENTICATION_FAILED}). Retrying with the same credentials cannot help, so a
   * failed cache does not retry; it serves its last set, stale, until closed. Empty while the cache works.
   */
  default Optional<dev.muster.MusterException> failure() {
    return Optional.empty();
  }

  /**
   * Waits until the first set is published (from etcd or the disk snapshot); false on timeout, and at once when
   * the cache has {@linkplain #failure() failed} without one.
   */
  boolean awaitReady(Duration timeout);

  /**
   * Adds a listener, from any thread, at any time. It first receives the set published last (as a
   * {@link EndpointDelta.Kind#SNAPSHOT} from the empty set; {@code onStale} too if the cache is stale), or, before
   * the first publication, that first SNAPSHOT; then every later change exactly once, in revision order. Throws
   * {@link IllegalStateException} once the cache is closed.
   */
  void addListener(EndpointListener listener);

  /**
   * Removes a listener added with {@link #addListener}: no change published after this call reaches it (a delivery
   * already under way may). A no-op for a listener not added, or on a closed cache. From any thread.
   *
   * @throws UnsupportedOperationException a cache that cannot (the default, for hand-fed test caches)
   */
  default void removeListener(EndpointListener listener) {
    throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot remove listeners");
  }

  /** Stops watching; the last set stays readable. Idempotent. */
  @Override
  void close();
}
