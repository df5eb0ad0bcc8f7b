package dev.muster.etcd.internal;

import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.internal.EtcdOps.EtcdCallException;
import dev.muster.internal.DeliveryPool;
import dev.muster.internal.SerialExecutor;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.RegistryLayout;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.registry.internal.RegistrarDriver;
import dev.muster.registry.internal.RegistrarDriver.Failure;
import dev.muster.registry.internal.RegistrarDriver.IoException;
import dev.muster.registry.internal.RegistrarDriver.Lease;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import io.etcd.jetcd.Client;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider's registration in etcd: the jetcd adapter of {@link RegistrarDriver}, which holds the state machine
 * (states, retries, drain, revoke; SPEC §3). This class implements the driver's {@link RegistrarDriver.Io} with
 * jetcd calls, runs its loop, and owns the shutdown hook.
 *
 * <p>The shutdown hook lives here, one per registration, rather than in {@code EtcdRegistry}: it must be in place
 * before the first lease is granted (so a SIGTERM that arrives while {@code register()} is still running revokes
 * what it created, a registration the registry does not hold yet), its switch is this registration's config, and
 * it must go away with the registration. The JVM starts all hooks at once, so many registrations still drain in
 * parallel at shutdown.
 *
 * <h2>Threading</h2>
 * No thread of its own (docs/design-registrations.md §1–2): the registration's loop is a {@link SerialExecutor}
 * over the process's {@link DeliveryPool}. Every driver input and every etcd call runs while holding its run
 * permit, one at a time, in order, on whichever thread holds it: a pool thread, or the caller of {@link #register}
 * or {@link #close()}, which runs the step itself when the loop is idle (it would wait for the step anyway; handing
 * it to a pool thread and back cost two wake-ups). An etcd call blocks for at most the request timeout; on a pool
 * thread it runs as a managed blocker ({@link DeliveryPool#blocking}), so the pool lends another thread meanwhile.
 * Timers are the registry's one timer thread, which only hands each task to the loop. {@link #update} and {@link
 * #closeAsync} only queue; {@link #register} and {@link #close()} wait on the driver's futures (nothing sleeps).
 * {@link #instance()}, {@link #leaseId()} and {@link #state()} read the driver's volatile fields. Listeners are
 * called by the permit's holder, never under a lock: so possibly on the thread inside {@code register()} or {@code
 * close()}; what they submit from there is queued behind the running step, and a {@code close()} from a listener
 * returns without waiting (the close runs after the listener).
 */
public final class EtcdRegistrar implements Registration {
  private static final Logger log = LoggerFactory.getLogger(EtcdRegistrar.class);

  private final EtcdConnection connection;
  private final LeasePool leasesAhead;
  private final String key;
  private final String servicePrefix;
  private final RegistrarConfig config;
  private final SerialExecutor loop;
  /** The registry's timer thread: it only hands a due task to {@link #loop}. */
  private final ScheduledExecutorService timers;
  /** Set once the driver has closed: nothing more is queued on the loop. */
  private volatile boolean ended;
  private final RegistrarDriver driver;
  private final Thread shutdownHook;

  private EtcdRegistrar(EtcdConnection connection, LeasePool leasesAhead, ScheduledExecutorService timers,
      RegistryLayout layout, Instance instance, RegistrarConfig config, RegistrarControls controls,
      RegistrationListener listener, Clock clock, LongSupplier nanoTime, RandomGenerator random) {
    this.connection = connection;
    this.timers = timers;
    this.leasesAhead = leasesAhead;
    this.key = layout.instanceKey(instance);
    this.servicePrefix = layout.servicePrefix(instance.namespace(), instance.service());
    this.config = config;
    JetcdIo own = new JetcdIo();
    RegistrarDriver.Io io = config.sharedLease()
        ? leasesAhead.shared().io(key, config.keepaliveInterval(), own, own) : own;
    this.driver = new RegistrarDriver(key, connection.config().endpoints().toString(), instance, config, controls,
        io, this::schedule, clock, nanoTime, random, listener);
    this.shutdownHook = config.shutdownHook() ? new Thread(this::closeFromHook, "muster-registrar-stop-"
        + instance.id()) : null;
    this.loop = DeliveryPool.serial();
    driver.closed().whenComplete((v, e) -> {
      ended = true;
      removeShutdownHook();
    });
  }

  /**
   * Registers {@code instance} and starts its keepalive loop. Blocks the caller until the key is written, the id
   * is found taken, or etcd stayed unreachable for {@code startTimeout}.
   */
  public static EtcdRegistrar register(EtcdConnection connection, LeasePool leasesAhead,
      ScheduledExecutorService timers, RegistryLayout layout, Instance instance, RegistrarConfig config,
      RegistrarControls controls, RegistrationListener listener, Clock clock, LongSupplier nanoTime,
      RandomGenerator random) {
    Objects.requireNonNull(instance, "instance");
    EtcdRegistrar r = new EtcdRegistrar(connection, leasesAhead, timers, layout, instance, config, controls,
        listener, clock, nanoTime, random);
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

  @Override
  public Instance instance() {
    return driver.instance();
  }

  @Override
  public long leaseId() {
    return driver.leaseId();
  }

  @Override
  public RegistrationState state() {
    return driver.state();
  }

  /** The etcd key this registration holds. */
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

  /**
   * The driver's calls, each a blocking jetcd call on the loop, bounded by the request timeout, and run as a managed
   * blocker when the loop is on a pool thread ({@link DeliveryPool#blocking}).
   */
  private final class JetcdIo implements RegistrarDriver.Io, SharedLeases.KeyOps {
    /** The client of the last call: the one a failure report is about. */
    private Client used;
    /** When that call started ({@link System#nanoTime()}): any success on {@code used} after it outvotes it. */
    private long attemptStartedNanos;
    /** Whether etcd answered the last call (even with a refusal or "no leader"): then it is not the connection's. */
    private boolean answered;
    /** How the last call failed, for the report (the connection's replacement line names it). */
    private String lastFailure = "";
    /** A first registration's lease was asked for: once its put ends, the pool grants the next one ahead. */
    private boolean refillAfterPut;

    /** One call on the current client; an answer, even a refusal, is reported as a success of the connection. */
    private <T> T call(java.util.function.Function<Client, T> op) {
      return DeliveryPool.blocking(() -> call(connection.client(), op));
    }

    /** Not itself a managed blocker: called inside one. */
    private <T> T call(Client c, java.util.function.Function<Client, T> op) {
      used = c;
      attemptStartedNanos = System.nanoTime();
      answered = false;
      try {
        T result = op.apply(c);
        connection.succeeded(c);
        return result;
      } catch (EtcdCallException e) {
        // etcd answered: a refusal, or "no leader" during an election (unavailable for the driver, which retries,
        // but nothing a new connection would change)
        answered = e.kind() != EtcdErrors.Kind.UNAVAILABLE || EtcdErrors.isNoLeader(e);
        lastFailure = e.getMessage();
        if (answered) {
          connection.succeeded(c);
        }
        throw e;
      }
    }

    @Override
    public long grant(Duration ttl) {
      try {
        return call(c -> EtcdOps.grant(c, ttl, config.requestTimeout()));
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    /** The pool's fresh lease when there is one and the config allows it, else a grant now. */
    @Override
    public Lease leaseForStart(Duration ttl) {
      if (!config.leaseAhead()) {
        return RegistrarDriver.Io.super.leaseForStart(ttl);
      }
      refillAfterPut = true;
      return leasesAhead.take(ttl).orElseGet(() -> RegistrarDriver.Io.super.leaseForStart(ttl));
    }

    /**
     * The pool's refill is handed to a delivery pool thread once the put is done, so the next lease's grant neither
     * competes with this put for etcd's commit nor delays {@code register()}'s return by the cost of starting the
     * call. Not to this registration's loop: the refill would hold it just after {@code register()} returns, and a
     * {@code close()} right then would find it busy and wait for a pool thread instead of running on its caller
     * (RegisterProbe's close() did). {@link LeasePool} is thread-safe and its grant asynchronous.
     */
    @Override
    public PutResult putIfAbsent(Instance instance, long lease) {
      try {
        EtcdOps.PutIfAbsent r = call(c -> EtcdOps.putIfAbsent(c, key, value(instance, lease), lease,
            config.requestTimeout()));
        return new PutResult(r.created(), r.revision(), r.holderLease());
      } catch (EtcdCallException e) {
        throw mapped(e);
      } finally {
        if (refillAfterPut) {
          refillAfterPut = false;
          Duration ttl = config.ttl();
          DeliveryPool.execute(() -> leasesAhead.refill(ttl));
        }
      }
    }

    @Override
    public long put(Instance instance, long lease) {
      try {
        return call(c -> EtcdOps.put(c, key, value(instance, lease), lease, config.requestTimeout()));
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    /** On the current client's keepalive stream, shared by the registry's registrations: one request per keepalive. */
    @Override
    public long keepAlive(long lease) {
      try {
        return DeliveryPool.blocking(() -> {
          KeepAliveStream stream = connection.keepAliveStream();
          return call(stream.client(), c -> stream.keepAlive(lease, config.requestTimeout()));
        });
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    /** Anything a revoke throws is classified (the JVM may be shutting down the client under it). */
    @Override
    public long revoke(long lease) {
      try {
        return call(c -> EtcdOps.revoke(c, lease, config.requestTimeout()));
      } catch (RuntimeException re) {
        throw mapped(re instanceof EtcdCallException ce ? ce
            : new EtcdCallException("revoke lease " + Long.toHexString(lease), re));
      }
    }

    @Override
    public Optional<Duration> remaining(long lease) {
      try {
        return call(c -> EtcdOps.remaining(c, lease, config.requestTimeout()));
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    @Override
    public long deleteIf(String key, long modRevision) {
      try {
        return call(c -> EtcdOps.deleteIf(c, key, modRevision, config.requestTimeout()));
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    @Override
    public java.util.OptionalLong modRevision(String key) {
      try {
        return call(c -> EtcdOps.modRevision(c, key, config.requestTimeout()));
      } catch (EtcdCallException e) {
        throw mapped(e);
      }
    }

    /** The connection decides: a success on {@code used} since this call began outvotes it. */
    @Override
    public void connectionFailed() {
      if (used != null && !answered) {
        Client c = used;
        long startedAt = attemptStartedNanos;
        String what = "registration " + key + ": " + lastFailure;
        DeliveryPool.blocking(() -> connection.failed(c, startedAt, what)); // may probe TCP
      }
    }

    /** Signed here, at each put, because only now is the lease known (a re-registration puts under a new one). */
    private byte[] value(Instance instance, long lease) {
      return config.signingKey() == null ? InstanceCodec.encode(instance)
          : InstanceCodec.encodeSigned(instance, key, lease, config.signingKey());
    }

    private IoException mapped(EtcdCallException e) {
      return switch (e.kind()) {
        case LEASE_NOT_FOUND -> new IoException(Failure.LEASE_NOT_FOUND, e.getMessage(), e);
        case UNAVAILABLE -> new IoException(Failure.UNAVAILABLE, e.getMessage(), e);
        case DENIED -> new IoException(Failure.DENIED, EtcdErrors.refusal(connection.config(), e.kind(),
            "write " + key, "readwrite on " + key + " or on its service prefix " + servicePrefix, e.getCause()), e);
        case UNAUTHENTICATED -> new IoException(Failure.UNAUTHENTICATED, EtcdErrors.refusal(connection.config(),
            e.kind(), "", "", e.getCause()), e);
        case OTHER -> new IoException(Failure.REFUSED, e.getMessage(), e);
      };
    }
  }
}
