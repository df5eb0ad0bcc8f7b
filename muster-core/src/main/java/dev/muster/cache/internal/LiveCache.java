package dev.muster.cache.internal;

import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.internal.Backoff;
import dev.muster.internal.DeliveryPool;
import dev.muster.internal.ListenerExecutor;
import dev.muster.registry.RegistryLayout;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The endpoint cache at run time: {@link CacheDriver}'s loop, its timers and its listeners' notifier, over the I/O
 * a registry adapter gives it ({@link IoFactory}: muster-etcd's {@code EtcdCacheIo}, a script in the tests). The
 * state machine is the driver's, the sets the {@link RevisionApplier}'s, the delivery rules the {@link
 * CacheNotifier}'s; this class runs them and answers {@link EndpointCache}.
 *
 * <h2>Threading</h2>
 * Two sequential executors over the process's {@link DeliveryPool} (issue 19 §2), not threads of its own:
 * <ul>
 *   <li>the <b>loop</b> runs the driver and every call of its I/O: each driver input, each timer (handed over by the
 *       pool's timer thread, {@code muster-cache-timer}) and each callback of the I/O (which only hops onto it through
 *       {@link Loop#execute}), one at a time, in order. The I/O's blocking waits (a range's pages, a watch that has to
 *       open its stream first) run as managed blockers ({@link DeliveryPool#blocking}), so they never hold up another
 *       cache;
 *   <li>the <b>notifier</b> runs the listeners through a {@link CacheNotifier}, one call at a time, in order, so a
 *       slow listener never delays the cache (the notifier coalesces publications it falls behind on). With a
 *       {@link CacheConfig#listenerExecutor()} it is a sequential executor over that one instead, so listeners that
 *       block hold the user's threads, not the pool's; same order, same one call at a time. The cache never shuts
 *       it down; if it refuses a task, or drops one it had queued (shutdownNow), the notifier moves to the pool for
 *       good with one WARN ({@link ListenerExecutor}), and no event is lost.
 * </ul>
 * So a watch event costs two hand-overs (the transport's thread to the loop, the loop to the notifier), onto pool
 * threads that are usually running already: 100 caches share a few threads instead of owning 200. Each task sees the
 * effects of the one before it on its executor, whatever thread ran it, so the loop's state needs no lock. After
 * {@link #close()} queued loop tasks and timers are dropped. {@link #current()} is a volatile read.
 */
public final class LiveCache implements EndpointCache {
  private static final Logger log = LoggerFactory.getLogger(LiveCache.class);
  /** The reconnect jitter's draws, shared by every cache (thread-safe; 80 B a cache when each had its own). */
  private static final SecureRandom BACKOFF_RANDOM = new SecureRandom();

  /**
   * What a cache gives its I/O: its loop, and there its driver's inputs. The I/O's callbacks (a watch response, a
   * stream's end) arrive on the transport's threads and hand themselves over with {@link #execute}; everything
   * else the I/O does is already on the loop (the driver calls it there).
   */
  public interface Loop {
    /**
     * Runs {@code task} on the cache's loop, after the tasks queued before it; dropped once the cache is closed.
     * Any thread. A task that throws is logged; the cache keeps running.
     */
    void execute(Runnable task);

    /** The driver, whose inputs ({@code onCreated}, {@code onEvents}, {@code onError}, ...) are called on the loop. */
    CacheDriver driver();

    /** The revision the cache holds (the applier's checkpoint): where a watch that has to move resumes. Loop only. */
    long checkpoint();
  }

  /** Makes a cache's I/O: called once, while the cache is built; {@code loop} may be used from the first I/O call. */
  @FunctionalInterface
  public interface IoFactory {
    /** The I/O of the cache of {@code prefix} (e.g. {@code /muster/default/orders/}), which it hands {@code loop}. */
    CacheDriver.Io create(String prefix, Loop loop);
  }

  private final CacheConfig config;
  private final String prefix;
  private final Executor loop;
  private final Executor notifyExecutor;
  private final RevisionApplier applier;
  private final CacheDriver driver;
  private final CacheNotifier listeners;
  /** The first set (true) or a failure (false): awaitReady's end. One future, not two latches: 24 B, not 96. */
  private final CompletableFuture<Boolean> settled = new CompletableFuture<>();
  private volatile EndpointSet current = EndpointSet.EMPTY;
  private volatile boolean closed;
  /** Set once close() has run the driver's close: the notifier then takes no new task (adding a listener fails). */
  private volatile boolean notifierClosed;
  private Consumer<EndpointCache> onClosed = cache -> { };
  private volatile long malformed;
  private volatile long unverified;
  private volatile long changes;

  private LiveCache(RegistryLayout layout, CacheConfig config, IoFactory io, CacheDriver.ResumeRule rule, Clock clock,
      RandomGenerator backoffRandom) {
    this.config = config;
    this.prefix = config.version() == null ? layout.servicePrefix(config.namespace(), config.service())
        : layout.versionPrefix(config.namespace(), config.service(), config.version());
    this.loop = DeliveryPool.sequential();
    ListenerExecutor own = config.listenerExecutor() == null ? null // never shut down by the cache
        : DeliveryPool.listenerExecutor(config.listenerExecutor(), config.service());
    Executor notifier = own == null ? DeliveryPool.sequential() : DeliveryPool.sequential(own);
    this.notifyExecutor = task -> {
      if (notifierClosed) {
        throw new RejectedExecutionException("the endpoint cache of " + config.service() + " is closed");
      }
      if (own != null) {
        own.rescueDropped(); // a worker its executor's shutdownNow() dropped: the pool runs it, with this task
      }
      notifier.execute(task);
    };
    this.listeners = new CacheNotifier(notifyExecutor, config.service());
    SnapshotStore store = config.snapshotFile() == null ? SnapshotStore.NONE
        : new FileSnapshotStore(config.snapshotFile());
    this.applier = new RevisionApplier(layout, prefix, config.trustedKeys(), clock);
    OnLoop onLoop = new OnLoop();
    this.driver = new CacheDriver(config, rule, applier, Objects.requireNonNull(io.create(prefix, onLoop), "io"),
        onLoop, clock, System::nanoTime, new Backoff(config.backoffBase(), config.backoffCap(),
            backoffRandom == null ? BACKOFF_RANDOM : backoffRandom),
        new ToListeners(), store);
  }

  /**
   * Creates the cache of {@code config} (its prefix laid out by {@code layout}) and starts it: the first range runs
   * on the cache's loop right away. {@code onClosed} runs once, on the thread that closes the cache, after it has
   * closed. {@code backoffRandom} draws the reconnect jitter; null for the caches' shared {@link SecureRandom}
   * (only the lab's jitter-off control passes one).
   */
  public static LiveCache start(RegistryLayout layout, CacheConfig config, IoFactory io, CacheDriver.ResumeRule rule,
      Clock clock, RandomGenerator backoffRandom, List<EndpointListener> listeners, Consumer<EndpointCache> onClosed) {
    return start(layout, config, io, rule, clock, backoffRandom, 0, listeners, onClosed);
  }

  /**
   * As above; {@code dropRevision} &gt; 0 makes the cache drop the n-th revision its watches deliver, before the
   * applier: the audit's negative control ({@code NegativeControls.watchDroppingRevision} in muster-etcd).
   */
  public static LiveCache start(RegistryLayout layout, CacheConfig config, IoFactory io, CacheDriver.ResumeRule rule,
      Clock clock, RandomGenerator backoffRandom, long dropRevision, List<EndpointListener> listeners,
      Consumer<EndpointCache> onClosed) {
    LiveCache cache = new LiveCache(Objects.requireNonNull(layout, "layout"), Objects.requireNonNull(config, "config"),
        Objects.requireNonNull(io, "io"), rule, clock, backoffRandom);
    cache.driver.dropRevisionForNegativeControl(dropRevision); // before the loop's first task, which publishes it
    cache.onClosed = Objects.requireNonNull(onClosed, "onClosed");
    listeners.forEach(cache.listeners::add);
    cache.onLoop(cache.driver::start);
    return cache;
  }

  @Override
  public Optional<CacheConfig> config() {
    return Optional.of(config);
  }

  @Override
  public EndpointSet current() {
    return current;
  }

  @Override
  public boolean isStale() {
    return driver.isStale();
  }

  @Override
  public Optional<Instant> staleSince() {
    return driver.staleSince();
  }

  @Override
  public Duration lastEventAge() {
    return driver.lastEventAge();
  }

  @Override
  public long resyncCount() {
    return driver.resyncCount();
  }

  @Override
  public long auditCount() {
    return driver.auditCount();
  }

  @Override
  public long auditDifferenceCount() {
    return driver.auditDifferenceCount();
  }

  @Override
  public long malformedCount() {
    return malformed;
  }

  @Override
  public long changeCount() {
    return changes;
  }

  @Override
  public long snapshotLoadCount() {
    return driver.snapshotLoadCount();
  }

  @Override
  public int listenerBacklog() {
    return listeners.backlog();
  }

  @Override
  public long unverifiedCount() {
    return unverified;
  }

  @Override
  public Optional<MusterException> failure() {
    return driver.failure();
  }

  @Override
  public boolean awaitReady(Duration timeout) {
    try {
      return settled.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (TimeoutException | ExecutionException e) {
      return false;
    }
  }

  @Override
  public void addListener(EndpointListener listener) {
    listeners.add(listener);
  }

  @Override
  public void removeListener(EndpointListener listener) {
    listeners.remove(listener);
  }

  /** The watched prefix, e.g. {@code /muster/default/orders/}. */
  public String prefix() {
    return prefix;
  }

  /**
   * Waits up to 5 s for the loop to close the driver (cancel the watch). An interrupt ends that wait early, the cache
   * still closes, and the interrupt flag stays set for the caller.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true; // from now on queued loop tasks and timers are dropped; this one is not
    CompletableFuture<Void> done = new CompletableFuture<>();
    loop.execute(() -> {
      try {
        driver.close(); // cancels the watch (the driver closes its stream)
        done.complete(null);
      } catch (RuntimeException e) {
        done.completeExceptionally(e);
      }
    });
    try {
      done.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the loop still closes the driver; we only stop waiting for it
      log.debug("closing the cache of {}: interrupted while the loop closed the watch", config.service());
    } catch (ExecutionException e) {
      log.debug("closing the cache of {}: {}", config.service(), e.getCause().toString());
    } catch (TimeoutException e) {
      log.debug("closing the cache of {}: the loop did not close the watch within 5 s", config.service());
    }
    notifierClosed = true; // notices already queued are still delivered
    onClosed.accept(this);
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  /** Runs {@code task} on the loop, unless the cache is closed (then it and every task still queued are dropped). */
  private void onLoop(Runnable task) {
    if (closed) {
      return;
    }
    try {
      loop.execute(() -> {
        if (!closed) {
          runSafely(task);
        }
      });
    } catch (RejectedExecutionException e) {
      // the pool refused (JVM shutting down): nothing more will run
    }
  }

  private void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("endpoint cache of {} failed a step; it keeps running", config.service(), e);
    }
  }

  /** The loop as the driver's timer and as the I/O's way in: everything it is handed runs on the loop. */
  private final class OnLoop implements CacheDriver.Timer, Loop {
    /**
     * The driver's timer: the pool's timer thread hands {@code task} to the loop when due. The returned cancel runs
     * on the loop (as every driver call does), so a task already handed over but not yet run is skipped by its flag.
     */
    @Override
    public Runnable schedule(Runnable task, Duration delay) {
      if (closed) {
        return () -> { };
      }
      LoopTimer timer = new LoopTimer(task);
      timer.future = DeliveryPool.schedule((Callable<Void>) timer, delay.toNanos());
      return timer;
    }

    @Override
    public void execute(Runnable task) {
      onLoop(task);
    }

    @Override
    public CacheDriver driver() {
      return driver;
    }

    @Override
    public long checkpoint() {
      return applier.revision();
    }
  }

  /**
   * One timer task of the cache, and its cancel handle ({@link #run()}): when due, the timer thread hands {@code
   * task} to the loop, which runs it unless it was cancelled first. One object where a flag array, two lambdas and
   * the executor's adapter were (about 70 B for each of a cache's waiting timers). {@code cancelled} and {@code
   * future} are the loop's: the schedule, the cancel and the run all happen there.
   */
  private final class LoopTimer implements Callable<Void>, Runnable {
    private final Runnable task;
    private boolean cancelled;
    private ScheduledFuture<?> future;

    LoopTimer(Runnable task) {
      this.task = task;
    }

    /** Due: onto the loop. */
    @Override
    public Void call() {
      onLoop(this::fire);
      return null;
    }

    private void fire() {
      if (!cancelled) {
        task.run();
      }
    }

    /** The cancel handle the driver keeps. */
    @Override
    public void run() {
      cancelled = true;
      future.cancel(false);
    }
  }

  /** Hands the driver's publications to the listeners' notifier. Runs on the loop. */
  private final class ToListeners implements CacheDriver.Publisher {
    @Override
    public void publish(EndpointSet set, EndpointDelta delta) {
      current = set;
      changes++; // the loop is the only writer
      malformed = applier.malformedCount(); // the loop: the applier's owner
      unverified = applier.unverifiedCount();
      settled.complete(true);
      listeners.publish(set, delta);
    }

    @Override
    public void failed(EndpointSet set, MusterException why) {
      settled.complete(false);
      listeners.failed(set, why);
    }

    @Override
    public void stale(EndpointSet set, Instant since, String reason) {
      listeners.stale(set, since, reason);
    }

    @Override
    public void recovered(EndpointSet set, Duration staleFor) {
      listeners.recovered(set, staleFor);
    }

    @Override
    public void held(EndpointSet kept, int wouldRemove, Duration holdFor) {
      log.warn("mass-removal guard: one change would remove {} of {} instances of {}; keeping the last good set"
          + " for up to {} ms", wouldRemove, kept.size(), config.service(), holdFor.toMillis());
    }
  }
}
