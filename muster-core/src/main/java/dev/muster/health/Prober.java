package dev.muster.health;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.internal.SerialRelay;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/*
 * State machine, per endpoint (docs/design-health.md):
 *
 *           M passes in a row                 N failures in a row
 *   UNKNOWN ─────────────────> HEALTHY <───────────────────────────┐
 *      │                         │ N failures in a row              │
 *      │ N failures in a row     v                                  │
 *      └─────────────────> UNHEALTHY ──── M passes in a row ────────┘
 *
 * UNKNOWN and HEALTHY are routable; only UNHEALTHY excludes (the lease and STARTING already gate a new instance).
 *
 * Threads: update() runs on the cache's notifier (one call at a time, on a delivery-pool thread); a probe runs when its
 * timer fires (the scheduler's thread) and its result arrives on the probe's own thread (the HTTP client's executor,
 * the NIO group), or on the scheduler's thread when it timed out. Each endpoint has one Target and at most one probe in
 * flight: the next is scheduled only when the last one's result is in. A Target's counts and verdict change, and the
 * sink is told, under the Target's monitor, which cancel() takes too: a result that comes after the endpoint left the
 * set (or after its address changed) is dropped, never reported. Lock order: Target, then the sink's (the balancer's)
 * lock; the sink never calls back. Events (the prober's, and through Sink.settled the balancer's) go to the listener
 * after the monitor is released, through a SerialRelay: queued under the monitor, delivered one at a time in that order
 * (a thread descheduled between the two once let a later probe_up of an endpoint reach the listener before the
 * probe_down it followed).
 */
/**
 * Probes each endpoint of one service's set, in parallel with the lease, and tells a {@link Sink} (the balancer)
 * when an endpoint goes down ({@code unhealthyThreshold} failures in a row) or comes back
 * ({@code healthyThreshold} passes in a row). Feed it the cache's changes with {@link #update} after the balancer
 * took them: new endpoints are probed from then on (first within one interval, jittered), endpoints that leave
 * stop being probed, an endpoint whose address changes starts over.
 *
 * <p>Thread-safe. {@link #update} must be called from one thread at a time (the cache's notifier).
 */
public final class Prober implements AutoCloseable {

  /**
   * Where verdicts go: the balancer ({@code Balancer} implements it). {@link #probeChanged} is called under the
   * endpoint's monitor, so it must be fast, must not call back into the prober and must not run user code (a
   * listener); {@link #settled} follows each call with no lock of the prober's held, for what the change caused
   * (the balancer hands its events to the listener there).
   */
  public interface Sink {
    void probeChanged(InstanceKey key, boolean down);

    default void settled() {}
  }

  /**
   * Runs the probes' timers: {@code task} once after {@code delay}, returning an action that cancels it (the shape
   * of {@code dev.muster.call.Scheduler}, so {@code scheduler::schedule} is one). Thread-safe.
   */
  @FunctionalInterface
  public interface Timer {
    Runnable schedule(Runnable task, Duration delay);
  }

  /** An endpoint's verdict. */
  public enum Verdict { UNKNOWN, HEALTHY, UNHEALTHY }

  private final String service;
  private final ProbeConfig config;
  private final Probe probe;
  private final Timer scheduler;
  private final Supplier<? extends RandomGenerator> random;
  private final Sink sink;
  private final SerialRelay<HealthEvent> events; // in the order the verdicts were reached
  private final Map<InstanceKey, Target> targets = new ConcurrentHashMap<>();
  private final AtomicLong passes = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final Runnable onClose;
  private volatile boolean closed;

  /**
   * @param probe what one probe does; closed by {@link #close()}
   * @param scheduler runs the probe timers and timeouts
   * @param random draws the jitter (and the first probe's delay)
   * @param onClose run at {@link #close()} after the probe is closed (to stop the pool); null for nothing
   */
  public Prober(String service, ProbeConfig config, Probe probe, Timer scheduler,
      Supplier<? extends RandomGenerator> random, Sink sink, HealthListener events, Runnable onClose) {
    this.service = Objects.requireNonNull(service, "service");
    this.config = Objects.requireNonNull(config, "config");
    this.probe = Objects.requireNonNull(probe, "probe");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.random = Objects.requireNonNull(random, "random");
    this.sink = Objects.requireNonNull(sink, "sink");
    this.events = new SerialRelay<>(HealthListener.guarded(events)::onEvent);
    this.onClose = onClose == null ? () -> { } : onClose;
  }

  /**
   * A prober on a pool of its own ({@code muster-probe-SERVICE-N}, daemon, {@link ProbeConfig#threads()} threads),
   * stopped by {@link #close()}: what every consumer that probes builds (MusterClient, the gRPC policy, Spring, DNS).
   *
   * @param probe what one probe does, or null for {@link Probe#of} on the pool (HTTP, TCP; a gRPC health probe is
   *     muster-grpc's and must be given)
   * @param timer runs the probe timers, or null for the pool
   * @throws dev.muster.InvalidInputException when {@code probe} is null and {@code config}'s kind needs one given
   */
  public static Prober start(String service, ProbeConfig config, Probe probe, Timer timer,
      Supplier<? extends RandomGenerator> random, Sink sink, HealthListener events) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    java.util.concurrent.ScheduledThreadPoolExecutor pool = new java.util.concurrent.ScheduledThreadPoolExecutor(
        config.threads(), r -> {
          Thread t = new Thread(r, "muster-probe-" + service + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
    pool.setRemoveOnCancelPolicy(true);
    Probe p;
    try {
      p = probe != null ? probe : Probe.of(config, pool);
    } catch (RuntimeException e) {
      pool.shutdownNow();
      throw new dev.muster.InvalidInputException("probe", config.describe(), e.getMessage());
    }
    Timer timers = timer != null ? timer : (task, delay) -> {
      java.util.concurrent.ScheduledFuture<?> f = pool.schedule(task, delay.toNanos(),
          java.util.concurrent.TimeUnit.NANOSECONDS);
      return () -> f.cancel(false);
    };
    return new Prober(service, config, p, timers, random, sink, events, pool::shutdownNow);
  }

  public ProbeConfig config() {
    return config;
  }

  /** Takes the cache's change: the delta's added, changed and removed instances (the whole set if it does not fit). */
  public void update(EndpointSet set, EndpointDelta delta) {
    if (closed) {
      return;
    }
    boolean fits = targets.size() - delta.removed().size() + delta.added().size() == set.size();
    if (!fits) {
      Set<InstanceKey> keep = new HashSet<>();
      for (Instance i : set.instances()) {
        keep.add(i.key());
        track(i);
      }
      for (InstanceKey key : Set.copyOf(targets.keySet())) {
        if (!keep.contains(key)) {
          untrack(key);
        }
      }
      return;
    }
    for (Instance i : delta.removed()) {
      untrack(i.key());
    }
    for (Instance i : delta.added()) {
      track(i);
    }
    for (Instance i : delta.changed()) {
      track(i);
    }
  }

  /** Starts probing {@code i}, or starts over if its address or port changed; otherwise keeps its target. */
  private void track(Instance i) {
    Target old = targets.get(i.key());
    if (old != null && old.instance.address().equals(i.address()) && old.instance.port() == i.port()) {
      return;
    }
    if (old != null) {
      old.cancel(true); // a new address is a new endpoint to judge: its old verdict is lifted
      sink.settled();
      probe.forget(old.instance);
    }
    Target t = new Target(i);
    targets.put(i.key(), t);
    t.schedule(firstDelay());
  }

  private void untrack(InstanceKey key) {
    Target t = targets.remove(key);
    if (t != null) {
      t.cancel(false); // the balancer dropped the endpoint's state with it
      probe.forget(t.instance);
    }
  }

  /** The verdict on {@code key}, or empty when it is not probed. */
  public java.util.Optional<Verdict> verdict(InstanceKey key) {
    Target t = targets.get(key);
    return t == null ? java.util.Optional.empty() : java.util.Optional.of(t.verdict);
  }

  /** The last probe's result on {@code key} ({@code "200"}, {@code "connection refused"}), if any. */
  public java.util.Optional<String> lastResult(InstanceKey key) {
    Target t = targets.get(key);
    return t == null || t.lastDetail == null ? java.util.Optional.empty() : java.util.Optional.of(t.lastDetail);
  }

  /** Endpoints probed now. */
  public int probedCount() {
    return targets.size();
  }

  /** Endpoints judged down now. */
  public long downCount() {
    return targets.values().stream().filter(t -> t.verdict == Verdict.UNHEALTHY).count();
  }

  /** Probes that passed, since the start. */
  public long passes() {
    return passes.get();
  }

  /** Probes that failed (timeouts included), since the start. */
  public long failures() {
    return failures.get();
  }

  /** Stops every probe and closes the probe; verdicts are not reported any more. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (InstanceKey key : Set.copyOf(targets.keySet())) {
      Target t = targets.remove(key);
      if (t != null) {
        t.cancel(false);
      }
    }
    try {
      probe.close();
    } finally {
      onClose.run();
    }
  }

  private Duration firstDelay() {
    return Duration.ofNanos((long) (random.get().nextDouble() * config.interval().toNanos()));
  }

  private Duration nextDelay() {
    double j = config.jitterPercent() / 100.0;
    double factor = 1.0 + (j == 0 ? 0 : (random.get().nextDouble() * 2 - 1) * j);
    return Duration.ofNanos(Math.max(1, (long) (config.interval().toNanos() * factor)));
  }

  /** One endpoint under probe. */
  private final class Target {
    final Instance instance;
    // Guarded by this.
    private boolean cancelled;
    private Runnable cancelTimer = () -> { };
    private int passesInRow;
    private int failuresInRow;
    volatile Verdict verdict = Verdict.UNKNOWN;
    volatile String lastDetail;

    Target(Instance instance) {
      this.instance = instance;
    }

    synchronized void schedule(Duration delay) {
      if (!cancelled) {
        cancelTimer = scheduler.schedule(this::run, delay);
      }
    }

    /** Stops probing; if {@code lift} and the endpoint was down, tells the sink it is not down any more. */
    synchronized void cancel(boolean lift) {
      cancelled = true;
      cancelTimer.run();
      if (lift && verdict == Verdict.UNHEALTHY) {
        sink.probeChanged(instance.key(), false);
      }
    }

    private void run() {
      synchronized (this) {
        if (cancelled) {
          return;
        }
      }
      // The probe (possibly the caller's own) runs under no lock; a cancel that comes meanwhile makes judge()
      // drop its result.
      CompletableFuture<ProbeResult> result;
      try {
        result = probe.check(instance, config.timeout());
        result = result != null ? result : CompletableFuture.completedFuture(
            ProbeResult.fail("the probe returned no result"));
      } catch (RuntimeException e) {
        result = CompletableFuture.completedFuture(ProbeResult.fail("the probe threw " + e));
      }
      CompletableFuture<ProbeResult> probed = result;
      Runnable cancelTimeout = scheduler.schedule(() -> probed.complete(
          ProbeResult.fail("timed out after " + config.timeout().toMillis() + " ms")), config.timeout());
      probed.whenComplete((r, e) -> {
        cancelTimeout.run();
        judge(r != null ? r : ProbeResult.fail(e == null ? "no result" : String.valueOf(e.getMessage())));
      });
    }

    private void judge(ProbeResult r) {
      HealthEvent event = null;
      synchronized (this) {
        if (cancelled) {
          return;
        }
        lastDetail = r.detail();
        if (r.healthy()) {
          passes.incrementAndGet();
          failuresInRow = 0;
          passesInRow++;
          if (verdict != Verdict.HEALTHY && passesInRow >= config.healthyThreshold()) {
            if (verdict == Verdict.UNHEALTHY) {
              sink.probeChanged(instance.key(), false);
              event = new HealthEvent(HealthEvent.Type.PROBE_UP, service, instance.id(), config.describe()
                  + ": " + passesInRow + " passed in a row, last " + r.detail(), Instant.now());
            }
            verdict = Verdict.HEALTHY;
          }
        } else {
          failures.incrementAndGet();
          passesInRow = 0;
          failuresInRow++;
          if (verdict != Verdict.UNHEALTHY && failuresInRow >= config.unhealthyThreshold()) {
            verdict = Verdict.UNHEALTHY;
            sink.probeChanged(instance.key(), true);
            event = new HealthEvent(HealthEvent.Type.PROBE_DOWN, service, instance.id(), config.describe()
                + ": " + failuresInRow + " failed in a row, last " + r.detail(), Instant.now());
          }
        }
        if (event != null) {
          events.add(event); // under the monitor: an endpoint's verdicts are queued in the order they were reached
        }
        schedule(nextDelay());
      }
      if (event != null) {
        events.drain(); // the cause first, then what it caused (panic on or off)
        sink.settled();
      }
    }
  }
}
