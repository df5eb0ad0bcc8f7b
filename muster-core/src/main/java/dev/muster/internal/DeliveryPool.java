package dev.muster.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinWorkerThread;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The threads every endpoint cache and every registration of this process runs on (issue 19 §2, issue 33 item 6): a
 * few pool threads shared by all, instead of two threads per cache (its loop and its notifier) and one per
 * registration, so an event that reaches 100 caches wakes a few busy threads rather than 200 parked ones.
 *
 * <ul>
 *   <li><b>{@link #sequential()}</b>: each cache takes two sequential executors over the pool, its loop and its
 *       notifier ({@link SerialExecutor}, the one serial executor of Muster). Each runs its tasks one at a time, in
 *       submission order, never two at once, but not always on the same thread; each task sees everything the one
 *       before it did (the run permit's hand-over is a happens-before edge).
 *   <li><b>{@link #serial()}</b>: each registration's loop, a {@link SerialExecutor} over the registrations' pool
 *       (below): the same contract, and a caller waiting for its step may run it on its own thread when the loop is
 *       idle ({@code SerialExecutor.runOrQueue}; docs/design-registrations.md §1–2). Its etcd calls run under
 *       {@link #blocking}, as a cache's range does.
 *   <li><b>The registrations' pool</b>: the same kind of pool, {@code muster-registrar-N}, with up to {@link
 *       #REGISTRAR_SPARES} spares instead of {@link #MAX_SPARES}. Every keepalive blocks its thread until etcd
 *       answers (up to the request timeout when it does not): with the caches' cap, the 11th registration waiting on
 *       a slow or unreachable etcd (on 2 cores) would wait for a thread, its keepalive late for its interval, and the
 *       caches' deliveries behind it. Here each waiting registration costs one thread while it waits, as the design
 *       says, and never holds up a cache.
 *   <li><b>The pool</b>: a {@link ForkJoinPool} in FIFO mode of {@code min(8, max(2, cores))} daemon threads
 *       {@code muster-delivery-N}, created with the first cache and kept for the life of the JVM (idle threads cost
 *       nothing but their stacks).
 *   <li><b>{@link #blocking}</b>: a cache's range is the one call that blocks its loop (for at most the request
 *       timeout per page). It runs as a {@link ForkJoinPool.ManagedBlocker}, so the pool adds a spare thread while
 *       it blocks and no other cache waits for it; at most {@link #MAX_SPARES} spares (when 50 caches start at
 *       once, the 9th and later ranges wait for a thread), and a spare idle for 10 s ends.
 *   <li><b>{@link #schedule}</b>: one daemon timer thread {@code muster-cache-timer} for every cache's timers; a
 *       timer only hands its task to the cache's loop. The one other task: muster-etcd's {@code WatchStream} writing a
 *       progress request again, one buffered write under its lock.
 * </ul>
 * Listeners run on the pool too, so one that blocks holds a pool thread: {@code EndpointListener} already asks for
 * listeners that are fast and do not block, unless their cache has a {@code CacheConfig.listenerExecutor}: then its
 * notifier is a sequential executor over that one instead ({@link #listenerExecutor}).
 *
 * <p>Thread-safe; stateless apart from the two pools and the timer.
 */
public final class DeliveryPool {
  /** Threads that run tasks: min(8, max(2, cores)). */
  public static final int PARALLELISM = Math.min(8, Math.max(2, Runtime.getRuntime().availableProcessors()));
  /** At most this many spares stand in for threads blocked in a range; beyond them a range just blocks. */
  public static final int MAX_SPARES = 8;
  /**
   * At most this many spares stand in for registrations' threads blocked on etcd: one per waiting registration up to
   * there (a JVM of the scale bench holds 250 registrations; before issue 33 item 6 each had a thread for life).
   */
  public static final int REGISTRAR_SPARES = 1024;

  private static final ForkJoinPool POOL = pool("muster-delivery-", MAX_SPARES);
  private static final ForkJoinPool REGISTRAR_POOL = pool("muster-registrar-", REGISTRAR_SPARES);

  private static final ScheduledExecutorService TIMER = timer();

  private DeliveryPool() {}

  /** FIFO, daemon threads named {@code prefix + index}, {@code spares} above the parallelism, idle ones end in 10 s. */
  private static ForkJoinPool pool(String prefix, int spares) {
    return new ForkJoinPool(PARALLELISM, pool -> {
      ForkJoinWorkerThread t = ForkJoinPool.defaultForkJoinWorkerThreadFactory.newThread(pool);
      t.setName(prefix + t.getPoolIndex());
      t.setDaemon(true);
      return t;
    }, null, true, 0, PARALLELISM + spares, 1, pool -> true, 10, TimeUnit.SECONDS);
  }

  private static ScheduledExecutorService timer() {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "muster-cache-timer");
      t.setDaemon(true);
      return t;
    });
    timer.setRemoveOnCancelPolicy(true); // a cancelled timer (most are: progress checks) leaves the queue at once
    return timer;
  }

  /** A new sequential executor over the pool: tasks run one at a time, in submission order. */
  public static Executor sequential() {
    return new SerialExecutor(POOL);
  }

  /** Runs {@code task} on a registrations' pool thread, unordered: short work that belongs to no loop (a refill). */
  public static void execute(Runnable task) {
    REGISTRAR_POOL.execute(task);
  }

  /** A new serial executor over the registrations' pool, for a registration's loop (see the class comment). */
  public static SerialExecutor serial() {
    return new SerialExecutor(REGISTRAR_POOL);
  }

  /**
   * What a cache's notifier runs on when it has a {@code CacheConfig.listenerExecutor}: that executor, or the pool
   * once that one lets a delivery down ({@link ListenerExecutor}). Wrap it with {@link #sequential(Executor)}.
   */
  public static ListenerExecutor listenerExecutor(Executor user, String service) {
    return new ListenerExecutor(user, POOL, service);
  }

  /** A new sequential executor over {@code under}: tasks run one at a time, in submission order. */
  public static Executor sequential(Executor under) {
    return new SerialExecutor(under);
  }

  /** Runs {@code task} on the timer thread after {@code delayNanos}; the task should only hand work on. */
  public static ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
    return TIMER.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  /** As above, for a task that is a {@code Callable} already: no adapter is kept with it while it waits. */
  public static <T> ScheduledFuture<T> schedule(java.util.concurrent.Callable<T> task, long delayNanos) {
    return TIMER.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Runs {@code call}, which blocks, and returns its result. On a thread of either pool it runs as a managed
   * blocker, so that pool keeps its parallelism with a spare thread meanwhile (up to its cap); elsewhere (a caller
   * running a registration's step) it simply runs.
   */
  public static <T> T blocking(Supplier<T> call) {
    if (!(Thread.currentThread() instanceof ForkJoinWorkerThread worker)
        || worker.getPool() != POOL && worker.getPool() != REGISTRAR_POOL) {
      return call.get();
    }
    Blocker<T> blocker = new Blocker<>(call);
    try {
      ForkJoinPool.managedBlock(blocker);
    } catch (InterruptedException e) { // not thrown by Blocker.block(); kept for the signature
      Thread.currentThread().interrupt();
    }
    if (blocker.failure != null) {
      throw blocker.failure;
    }
    return blocker.result;
  }

  /** One blocking call as a {@link ForkJoinPool.ManagedBlocker}: run once, then releasable. */
  private static final class Blocker<T> implements ForkJoinPool.ManagedBlocker {
    private final Supplier<T> call;
    private T result;
    private RuntimeException failure;
    private boolean done;

    Blocker(Supplier<T> call) {
      this.call = call;
    }

    @Override
    public boolean block() {
      try {
        result = call.get();
      } catch (RuntimeException e) {
        failure = e;
      } finally {
        done = true;
      }
      return true;
    }

    @Override
    public boolean isReleasable() {
      return done;
    }
  }
}
