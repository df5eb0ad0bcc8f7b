package dev.muster.etcd.internal;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a cache's notifier runs on when its {@code CacheConfig.listenerExecutor} is set: the user's executor, or the
 * shared delivery pool once that executor has refused a task.
 *
 * <p>It sits <em>under</em> the notifier's sequential executor, which hands it only its worker (the task that drains
 * the notifier's queue). So a refusal moves the worker, never a delivery: the queue, its order and its one call at a
 * time stay those of the one sequential executor, and the delivery that was being handed over runs on the pool
 * with the rest. Why fall back rather than fail the cache: a cache's terminal failure
 * ({@code EndpointListener.onFailed}) is etcd refusing it, and a listener could not even be told of this one on the
 * executor that refused; on the pool every event still arrives, and the WARN says what to mend. The cache's own
 * close is not a refusal: it rejects above the sequential executor, before anything reaches this one.
 *
 * <p>Thread-safe: {@link #execute} is called by whichever thread hands the notifier a task (the cache's loop, a
 * thread adding a listener); the switch to the pool is a volatile flag, set once.
 */
final class ListenerExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(ListenerExecutor.class);

  private final Executor user;
  private final Executor pool;
  private final String service;
  private volatile boolean onPool;

  ListenerExecutor(Executor user, Executor pool, String service) {
    this.user = Objects.requireNonNull(user, "user");
    this.pool = Objects.requireNonNull(pool, "pool");
    this.service = Objects.requireNonNull(service, "service");
  }

  @Override
  public void execute(Runnable worker) {
    if (!onPool) {
      try {
        user.execute(worker);
        return;
      } catch (RejectedExecutionException e) {
        onPool = true;
        log.warn("the listenerExecutor of the endpoint cache of {} refused a delivery ({}); its listeners run on the"
            + " shared delivery pool from now on, where they must not block: keep that executor running until the"
            + " cache is closed", service, e.toString());
      }
    }
    pool.execute(worker);
  }

  /** True once the user's executor refused a task and the listeners moved to the pool (for tests). */
  boolean onPool() {
    return onPool;
  }
}
