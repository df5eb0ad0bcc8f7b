package dev.muster.outlier;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/*
 * Algorithm: Envoy's outlier detection, "consecutive" detectors only (grpc-java's OutlierDetectionLoadBalancer is the
 * same idea; SPEC §5).
 *
 *  - Each host counts local-origin failures and 5xx responses in a row, with atomics, on the caller's thread.
 *    SUCCESS resets both; HTTP_5XX resets the local-origin count (the connection worked).
 *  - A count that reaches its threshold on a host that is not ejected asks for an ejection. Ejection state changes
 *    only under this detector's lock, so the max-percent rule sees a consistent count: eject when
 *    (active + 1) * 100 <= hosts * maxEjectionPercent, or when nothing is ejected yet (Envoy: one host may always be
 *    ejected, whatever the percent). A refused ejection is counted as an overflow; the count stays at its threshold
 *    so the host's next failure asks again.
 *  - The n-th ejection in a row lasts min(base * n, max). Envoy decrements n once per detection interval while the
 *    host is healthy; there is no interval timer here, so n loses one per baseEjectionTime spent un-ejected, worked
 *    out lazily at the next ejection.
 *  - Un-ejection is lazy too, so the detector needs no thread: the balancer's picker carries the earliest
 *    ejectedUntil, and the first pick after it rebuilds, calling unejectDue() first.
 *  - Every ejection is reported to the Pool (the balancer rebuilds its picker) after the lock is released. Lock
 *    order is balancer lock, then detector lock, never the reverse; no callback runs under the detector's lock.
 *
 * Ejections are local: they never leave the process and never touch the registry.
 */
/**
 * Ejects endpoints that keep failing, for one service. Feed it every attempt's {@link Outcome} with
 * {@link #record}; the {@linkplain #attach attached} balancer stops picking an ejected endpoint until its ejection
 * time is over.
 *
 * <p>Thread-safe. {@link #record} is lock-free unless a count crosses its threshold; ejection and un-ejection take a
 * short internal lock, never held across a callback.
 */
public final class OutlierDetector {
  /** The endpoints the detector judges, as the balancer sees them. Implemented by the balancer. */
  public interface Pool {
    /** The hosts in the pool now; read under the detector's lock, so it must not block or call back. */
    List<OutlierState> hosts();

    /** A host was ejected: rebuild the picker. Called without the detector's lock, on the recording thread. */
    void ejectionsChanged();
  }

  private final OutlierConfig config;
  private final LongSupplier nanoTime;
  private final long baseNanos;
  private final long maxNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile Pool pool;

  // Written under the lock.
  private volatile long ejectionsLocalOrigin;
  private volatile long ejections5xx;
  private volatile long overflows;

  public OutlierDetector(OutlierConfig config, LongSupplier nanoTime) {
    this.config = Objects.requireNonNull(config, "config");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.baseNanos = config.baseEjectionTime().toNanos();
    this.maxNanos = config.maxEjectionTime().toNanos();
  }

  /** A detector with ejection turned off: every outcome is ignored. */
  public static OutlierDetector disabled(LongSupplier nanoTime) {
    return new OutlierDetector(OutlierConfig.builder().enabled(false).build(), nanoTime);
  }

  public OutlierConfig config() {
    return config;
  }

  /** Binds this detector to the balancer it serves; once only (one detector per balancer). */
  public void attach(Pool pool) {
    Objects.requireNonNull(pool, "pool");
    lock.lock();
    try {
      if (this.pool != null) {
        throw new IllegalStateException("this OutlierDetector already serves a balancer: make one per service");
      }
      this.pool = pool;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records what an attempt against {@code host} proved. Returns true when this outcome ejected the host (the pool
   * has then already been told).
   */
  public boolean record(OutlierState host, Outcome outcome) {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(outcome, "outcome");
    if (!config.enabled()) {
      return false;
    }
    switch (outcome) {
      case SUCCESS -> {
        host.resetCounts();
        return false;
      }
      case LOCAL_ORIGIN_FAILURE -> {
        int n = host.localOriginFailures.incrementAndGet();
        return n >= config.consecutiveLocalOriginFailure() && !host.isEjected() && tryEject(host, outcome);
      }
      case HTTP_5XX -> {
        host.localOriginFailures.set(0);
        int n = host.failures5xx.incrementAndGet();
        return n >= config.consecutive5xx() && !host.isEjected() && tryEject(host, outcome);
      }
      default -> throw new AssertionError(outcome);
    }
  }

  private boolean tryEject(OutlierState host, Outcome cause) {
    Pool p = pool;
    if (p == null) {
      throw new IllegalStateException("OutlierDetector is not attached to a balancer");
    }
    lock.lock();
    try {
      if (host.isEjected()) {
        return false;
      }
      List<OutlierState> hosts = p.hosts();
      if (!containsIdentity(hosts, host)) {
        return false; // removed from the set while its attempt ran
      }
      long now = nanoTime.getAsLong();
      int active = countEjected(hosts);
      if (active > 0 && (active + 1) * 100L > (long) hosts.size() * config.maxEjectionPercent()) {
        overflows++;
        return false;
      }
      int times = host.decayedTimes(now, baseNanos);
      times = (int) Math.min(times + 1L, maxNanos / baseNanos + 1);
      long duration = Math.min(maxNanos, baseNanos * times);
      host.eject(now + duration, times);
      if (cause == Outcome.LOCAL_ORIGIN_FAILURE) {
        ejectionsLocalOrigin++;
      } else {
        ejections5xx++;
      }
    } finally {
      lock.unlock();
    }
    p.ejectionsChanged();
    return true;
  }

  /**
   * Un-ejects every host in {@code hosts} whose ejection time has passed and resets its counts; true if any was.
   * Called by the balancer while it rebuilds its picker (so it reports nothing back).
   */
  public boolean unejectDue(List<OutlierState> hosts) {
    long now = nanoTime.getAsLong();
    boolean changed = false;
    lock.lock();
    try {
      for (OutlierState host : hosts) {
        if (host.isEjected() && now - host.ejectedUntilNanos() >= 0) {
          host.uneject();
          changed = true;
        }
      }
    } finally {
      lock.unlock();
    }
    return changed;
  }

  /** Ejections so far, both causes. */
  public long ejections() {
    return ejectionsLocalOrigin + ejections5xx;
  }

  /** Ejections caused by consecutive local-origin failures. */
  public long ejectionsLocalOrigin() {
    return ejectionsLocalOrigin;
  }

  /** Ejections caused by consecutive 5xx responses. */
  public long ejections5xx() {
    return ejections5xx;
  }

  /** Ejections refused by {@link OutlierConfig#maxEjectionPercent()} (Envoy's {@code ejections_overflow}). */
  public long ejectionsOverflow() {
    return overflows;
  }

  /** Hosts of the attached pool ejected now. */
  public int activeEjections() {
    Pool p = pool;
    return p == null ? 0 : countEjected(p.hosts());
  }

  private static int countEjected(List<OutlierState> hosts) {
    int n = 0;
    for (OutlierState h : hosts) {
      if (h.isEjected()) {
        n++;
      }
    }
    return n;
  }

  private static boolean containsIdentity(List<OutlierState> hosts, OutlierState host) {
    for (OutlierState h : hosts) {
      if (h == host) {
        return true;
      }
    }
    return false;
  }
}
