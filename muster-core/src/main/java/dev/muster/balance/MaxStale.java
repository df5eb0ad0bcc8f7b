package dev.muster.balance;

import dev.muster.RegistryUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Bounded staleness for one {@link Balancer} (the cache's {@code onStale} / {@code onRecovered}, against
 * {@link BalancerConfig#maxStale()}): when the registry has been unreachable past {@code maxStale}, the balancer's
 * stale policy applies until it answers again. Only the state and the messages; the balancer applies the policy in
 * its rebuild.
 *
 * <p>Not thread-safe: guarded by the balancer's lock, except {@link #refusal()} and {@link #isOver()}, which read
 * volatile fields from any thread.
 */
final class MaxStale {
  private final Duration maxStale; // null: unbounded
  private final StalePolicy policy;
  private final String service;
  private final Clock clock;

  private volatile Instant staleSince; // null while fresh
  private volatile Instant overSince; // null until maxStale is reached
  private long deadlineNanos;
  private boolean armed;

  MaxStale(BalancerConfig config, String service, Clock clock) {
    this.maxStale = config.maxStale();
    this.policy = config.stalePolicy();
    this.service = service;
    this.clock = clock;
  }

  /**
   * The registry has been unreachable since {@code since}; the deadline is armed from how long ago that was (a
   * balancer that joins a cache already stale comes in late). Returns the delay until maxStale is reached, or null
   * when there is no bound or it was already armed for this outage.
   */
  Duration stale(Instant since, long nowNanos) {
    if (staleSince != null && armed) {
      return null; // the same outage, already armed (a listener hears onStale once per outage; a refusal may repeat)
    }
    staleSince = since;
    if (maxStale == null) {
      return null;
    }
    Duration left = maxStale.minus(Duration.between(since, clock.instant()));
    left = left.isNegative() ? Duration.ZERO : left;
    deadlineNanos = nowNanos + left.toNanos();
    armed = true;
    return left;
  }

  /** The registry answers again: true when the policy was in force and is lifted now. */
  boolean recovered() {
    boolean wasOver = overSince != null;
    staleSince = null;
    overSince = null;
    armed = false;
    return wasOver;
  }

  /** Stops the clock of an outage under way: it no longer reaches maxStale. */
  void disarm() {
    armed = false;
  }

  /** Reaches maxStale if it is due at {@code nowNanos}: true when it was reached just now. */
  boolean reachIfDue(long nowNanos) {
    if (!armed || overSince != null || nowNanos - deadlineNanos < 0) {
      return false;
    }
    overSince = clock.instant();
    return true;
  }

  /** When a rebuild must look again ({@link Picker#NO_WAKE}: never). */
  long wakeAtNanos() {
    return armed && overSince == null ? deadlineNanos : Picker.NO_WAKE;
  }

  boolean isOver() {
    return overSince != null;
  }

  boolean refusing() {
    return overSince != null && policy == StalePolicy.FAIL_CLOSED;
  }

  /** KEEP_FAILING_ENDPOINTS_OUT's window while it is in force, else -1. */
  long recentWindowNanos() {
    return overSince != null && policy == StalePolicy.KEEP_FAILING_ENDPOINTS_OUT ? maxStale.toNanos() : -1;
  }

  StalePolicy policy() {
    return policy;
  }

  /** Why a new call must be refused now, or null: past maxStale under FAIL_CLOSED. From any thread. */
  RegistryUnavailableException refusal() {
    Instant since = staleSince;
    if (overSince == null || policy != StalePolicy.FAIL_CLOSED || since == null) {
      return null;
    }
    return new RegistryUnavailableException(message(since) + ": new calls to " + service + " are refused"
        + " (stalePolicy FAIL_CLOSED) until etcd answers", null);
  }

  /** The MAX_STALE_REACHED event's detail. */
  String reachedDetail() {
    return message(staleSince) + "; " + (policy == StalePolicy.FAIL_CLOSED
        ? "new calls are refused (FAIL_CLOSED)"
        : "only endpoints with a recent success are called (KEEP_FAILING_ENDPOINTS_OUT)");
  }

  /** The MAX_STALE_CLEARED event's detail. */
  String clearedDetail(Duration staleFor) {
    return "the registry answers again after " + staleFor.toMillis() + " ms stale; " + policy + " lifted";
  }

  private String message(Instant since) {
    return "registry unreachable for " + Duration.between(since, clock.instant()).toSeconds() + " s, over maxStale "
        + maxStale.toSeconds() + " s";
  }
}
