package dev.muster.registry.internal;

import dev.muster.RegistryUnavailableException;
import dev.muster.internal.DeliveryPool;
import dev.muster.internal.SerialExecutor;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistrationState;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider's registration at run time: {@link RegistrarDriver}, which holds the state machine (states, retries,
 * drain, revoke; SPEC §3), run on its loop and its timers, over the I/O a registry adapter gives it (muster-etcd's
 * {@code EtcdRegistrarIo}, a script in the tests). This class owns the loop, the timers' hand-over, the shutdown
 * hook, and {@code register()}'s and {@code close()}'s waits.
 *
 * <p>The shutdown hook lives here, one per registration, rather than in the registry: it must be in place before
 * the first lease is granted (so a SIGTERM that arrives while {@code register()} is still running revokes what it
 * created, a registration the registry does not hold yet), its switch is this registration's config, and it must go
 * away with the registration. The JVM starts all hooks at once, so many registrations still drain in parallel at
 * shutdown.
 *
 * <h2>Threading</h2>
 * No thread of its own (docs/design-registrations.md §1–2): the registration's loop is a {@link SerialExecutor}
 * over the process's {@link DeliveryPool}. Every driver input and every I/O call runs while holding its run
 * permit, one at a time, in order, on whichever thread holds it: a pool thread, or the caller of {@link #register}
 * or {@link #close()}, which runs the step itself when the loop is idle (it would wait for the step anyway; handing
 * it to a pool thread and back cost two wake-ups). An I/O call blocks for at most the request timeout; on a pool
 * thread the I/O runs it as a managed blocker ({@link DeliveryPool#blocking}), so the pool lends another thread
 * meanwhile. Timers are the registry's one timer thread ({@link #newTimers()}), which only hands each task to the
 * loop. {@link #update} and {@link #closeAsync} only queue; {@link #register} and {@link #close()} wait on the
 * driver's futures (nothing sleeps). {@link #instance()}, {@link #leaseId()} and {@link #state()} read the driver's
 * volatile fields. Listeners are called by the permit's holder, never under a lock: so possibly on the thread inside
 * {@code register()} or {@code close()}; what they submit from there is queued behind the running step, and a {@code
 * close()} from a listener returns without waiting (the close runs after the listener).
 */
public final class LiveRegistration implements Registration {
  private static final Logger log = LoggerFactory.getLogger(LiveRegistration.class);

  private final String key;
  private final RegistrarConfig config;
  private final SerialExecutor loop;
  /** The registry's timer thread: it only hands a due task to {@link #loop}. */
  private final ScheduledExecutorService timers;
  /** Set once the driver has closed: nothing more is queued on the loop. */
  private volatile boolean ended;
  private final RegistrarDriver driver;
  private final Thread shutdownHook;

  private LiveRegistration(String key, String endpoints, Instance instance, RegistrarConfig config,
      RegistrarControls controls, RegistrarDriver.Io io, ScheduledExecutorService timers,
      RegistrationListener listener, Clock clock, LongSupplier nanoTime, RandomGenerator random) {
    this.timers = timers;
    this.key = key;
    this.config = config;
    this.driver = new RegistrarDriver(key, endpoints, instance, config, controls, io, this::schedule, clock, nanoTime,
        random, listener);
    this.shutdownHook = config.shutdownHook() ? new Thread(this::closeFromHook, "muster-registrar-stop-"
        + instance.id()) : null;
    this.loop = DeliveryPool.serial();
    driver.closed().whenComplete((v, e) -> {
      ended = true;
      removeShutdownHook();
    });
  }

  /**
   * Registers {@code instance} under {@code key} through {@code io} and starts its keepalive loop. Blocks the caller
   * until the key is written, the id is found taken, or the registry stayed unreachable for {@code startTimeout}.
   *
   * @param endpoints where the registry is, for messages
   * @param timers the registry's timer thread ({@link #newTimers()}): due tasks are handed to the loop
   */
  public static LiveRegistration register(String key, String endpoints, Instance instance, RegistrarConfig config,
      RegistrarControls controls, RegistrarDriver.Io io, ScheduledExecutorService timers,
      RegistrationListener listener, Clock clock, LongSupplier nanoTime, RandomGenerator random) {
    Objects.requireNonNull(instance, "instance");
    LiveRegistration r = new LiveRegistration(key, endpoints, instance, config, controls, io, timers, listener, clock,
        nanoTime, random);
    if (r.shutdownHook != null) {
      Runtime.getRuntime().addShutdownHook(r.shutdownHook); // before the first grant; see the class comment
    }
    r.loop.runOrQueue(r.driver::start); // the loop is new, so idle: the start's first attempt runs right here
    try {
      r.driver.started().get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException re ? re
          : new RegistryUnavailableException("could not register " + r.key + ": " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      r.closeAsync(); // the driver ends the start, then revokes whatever it registered
      throw new RegistryUnavailableException("interrupted while waiting for etcd", e);
    }
    return r;
  }

  /**
   * A registry's timer thread for its registrations, {@code muster-registrar-timer}: one daemon thread, started with
   * the first, that hands due tasks to their loops. The registry shuts it down when it closes.
   */
  public static ScheduledThreadPoolExecutor newTimers() {
    ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "muster-registrar-timer");
      t.setDaemon(true);
      return t;
    });
    timers.setRemoveOnCancelPolicy(true); // a cancelled keepalive or retry leaves the queue at once
    return timers;
  }

  @Override
  public Instance instance() {
    return driver.instance();
  }

  @Override
  public long leaseId() {
    return driver.leaseId();
  }

  @Override
  public dev.muster.registry.RegistrationStats stats() {
    return driver.stats();
  }

  @Override
  public RegistrationState state() {
    return driver.state();
  }

  /** The registry key this registration holds. */
  public String key() {
    return key;
  }

  /** Completes when the registration has ended (revoked, left to expire, or never made). */
  public CompletableFuture<Void> whenClosed() {
    return driver.closed();
  }

  /** Why closing could not revoke the lease (its key then expires with it), or empty. Read after closing. */
  public Optional<String> leftBehind() {
    return driver.leftBehind();
  }

  @Override
  public CompletableFuture<Instance> update(UnaryOperator<Instance> change) {
    CompletableFuture<Instance> result = new CompletableFuture<>();
    submit(() -> driver.update(change, result), () -> result.completeExceptionally(
        new IllegalStateException("registration " + key + " is closed")));
    return result;
  }

  @Override
  public CompletableFuture<Void> drain() {
    submit(driver::drain, () -> { }); // rejected: the driver has closed, and drained() with it
    return driver.drained();
  }

  @Override
  public CompletableFuture<Void> closeAsync() {
    submit(driver::close, () -> { }); // rejected: the loop is gone because the driver closed
    return driver.closed();
  }

  /**
   * Drains and revokes, waiting until done (at most {@link #closeLimit()}). When the loop is idle the close runs on
   * this thread; from a listener (a task of this loop) it only queues the close and returns: that thread cannot wait
   * for what runs after it.
   */
  @Override
  public void close() {
    if (loop.inTask()) {
      closeAsync();
      removeShutdownHook();
      return;
    }
    closeHere();
    removeShutdownHook();
    awaitClosed();
  }

  /** How long {@link #close()} waits: the drain, the last keepalive, the revoke and its retries. */
  public Duration closeLimit() {
    return config.drain().plus(config.requestTimeout().multipliedBy(3)).plusSeconds(1);
  }

  @Override
  public String toString() {
    return "Registration[" + key + ", lease " + Long.toHexString(leaseId()) + ", " + state() + "]";
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  /**
   * The driver's timer: the registry's timer thread hands {@code task} to the loop when due. The returned cancel
   * runs on the loop (as every driver call does), so a task already handed over but not yet run is skipped by its
   * flag.
   */
  private Runnable schedule(Runnable task, Duration delay) {
    if (ended) {
      return () -> { }; // the driver has closed; nothing more is due
    }
    boolean[] cancelled = new boolean[1]; // loop only: written by the cancel, read by the task, both on the loop
    try {
      ScheduledFuture<?> f = timers.schedule(() -> submit(() -> {
        if (!cancelled[0]) {
          task.run();
        }
      }, () -> { }), delay.toNanos(), TimeUnit.NANOSECONDS);
      return () -> {
        cancelled[0] = true;
        f.cancel(false);
      };
    } catch (RejectedExecutionException e) {
      return () -> { }; // the registry is closed: its timer thread is gone
    }
  }

  /** Queues {@code task} on the loop, or runs {@code onRejected} when the driver has closed. */
  private void submit(Runnable task, Runnable onRejected) {
    if (ended) {
      onRejected.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) { // the pool refused (the JVM is going down)
      onRejected.run();
    }
  }

  /** The driver's close on this thread if the loop is idle, else queued; the caller then waits for it. */
  private void closeHere() {
    if (ended) {
      return;
    }
    try {
      loop.runOrQueue(driver::close);
    } catch (RejectedExecutionException e) {
      // the pool refused what was queued behind the close (the JVM is going down); the wait below is bounded
    }
  }

  private void closeFromHook() {
    closeHere();
    awaitClosed();
  }

  private void awaitClosed() {
    Duration limit = closeLimit();
    try {
      driver.closed().get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      log.warn("closing {} took longer than {} ms; the lease will expire by itself", key, limit.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      log.warn("closing {} failed: {}", key, e.getCause().toString());
    }
  }

  private void removeShutdownHook() {
    if (shutdownHook == null || Thread.currentThread() == shutdownHook) {
      return;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down; the hook is running or will run close() too, which is idempotent
    }
  }
}
