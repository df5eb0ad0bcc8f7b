package dev.muster.internal;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a cache's notifier runs on when its {@code CacheConfig.listenerExecutor} is set: the user's executor, or the
 * shared delivery pool once that executor has let a delivery down.
 *
 * <p>It sits <em>under</em> the notifier's sequential executor, which hands it only its worker (the task that drains
 * the notifier's queue). So moving to the pool moves the worker, never a delivery: the queue, its order and its one
 * call at a time stay those of the one sequential executor. Two ways the user's executor lets it down:
 * <ul>
 *   <li>it <b>refuses</b> the worker ({@link RejectedExecutionException}, e.g. shut down while the cache is open):
 *       the worker runs on the pool at once;
 *   <li>it <b>drops</b> the worker it had queued ({@code shutdownNow()} returns it unrun): the sequential executor
 *       would then wait for it forever. {@link #rescueDropped()}, called before every notifier task, sees the
 *       executor terminated with the worker never started, and runs it on the pool; its deliveries arrive with that
 *       next task (the next change or notice, or a listener added).
 * </ul>
 * Either way one WARN, and the pool from then on. Why not fail the cache instead: a cache's terminal failure
 * ({@code EndpointListener.onFailed}) is etcd refusing it, and its listeners could not even be told on the executor
 * that let them down; on the pool every event still arrives, and the WARN says what to mend. The cache's own close
 * is not a refusal: it rejects above the sequential executor, before anything reaches this one.
 *
 * <p>Thread-safe: {@link #execute} and {@link #rescueDropped} are called by whichever thread hands the notifier a
 * task (the cache's loop, a thread adding a listener). A worker runs at most once ({@link Handoff}).
 */
public final class ListenerExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(ListenerExecutor.class);

  private final Executor user;
  private final Executor pool;
  private final String service;
  private final AtomicBoolean onPool = new AtomicBoolean();
  /** The worker last handed to the user's executor, or null. */
  private volatile Handoff last;

  ListenerExecutor(Executor user, Executor pool, String service) {
    this.user = Objects.requireNonNull(user, "user");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.service = Objects.requireNonNull(service, "service");
  }

  @Override
  public void execute(Runnable worker) {
    Handoff h = new Handoff(worker);
    if (!onPool.get()) {
      try {
        last = h;
        user.execute(h);
        return;
      } catch (RejectedExecutionException e) {
        toPool("refused a delivery (" + e + ")");
      }
    }
    pool.execute(h);
  }

  /** Runs on the pool the worker the user's executor dropped unrun (see the class comment), if it did. */
  public void rescueDropped() {
    if (onPool.get()) {
      return;
    }
    Handoff h = last;
    if (h != null && !h.taken.get() && user instanceof ExecutorService es && es.isTerminated()) {
      toPool("was terminated with a delivery queued and not run (shutdownNow?)");
      pool.execute(h); // a no-op if the user's executor ran it after all: a Handoff runs once
    }
  }

  private void toPool(String what) {
    if (onPool.compareAndSet(false, true)) {
      log.warn("the listenerExecutor of the endpoint cache of {} {}; its listeners run on the shared delivery pool"
          + " from now on, where they must not block: keep that executor running until the cache is closed",
          service, what);
    }
  }

  /** One hand-over of the sequential executor's worker: whoever runs it first runs the worker, once. */
  private static final class Handoff implements Runnable {
    private final Runnable worker;
    private final AtomicBoolean taken = new AtomicBoolean();

    Handoff(Runnable worker) {
      this.worker = worker;
    }

    @Override
    public void run() {
      if (taken.compareAndSet(false, true)) {
        worker.run();
      }
    }
  }
}
