package dev.muster.etcd.internal;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A registration's loop thread started ahead: one spare per {@code EtcdRegistry}, so that {@code register()} does not
 * wait for a thread to start (0.2–0.3 ms of a 1–2.6 ms call; docs/design-perf2.md, "What is left", item 2). As the
 * {@link LeasePool} does for leases, the spare is replaced by the registration that took it, on its own loop after
 * its put, so the replacement's thread start is never on a caller's path.
 *
 * <p>The life of the spare:
 * <pre>
 * (none) --refill()-->           READY (its thread started and parked)
 * READY --take(name)-->          the registration's loop (renamed to name); (none)
 * (none) --take(name)-->         a new loop started on the caller's thread, as before this class
 * READY --close()-->             shut down; take() then always starts its own, refill() does nothing
 * </pre>
 *
 * <p>Thread-safe: the spare is guarded by {@code this}; a thread is started outside the lock.
 */
public final class LoopsAhead implements AutoCloseable {
  private static final AtomicInteger SPARES = new AtomicInteger();

  private ScheduledThreadPoolExecutor spare; // guarded by this
  private boolean closed; // guarded by this

  /**
   * The spare loop, its thread renamed {@code name}, or a new one of that name; the caller owns it (and shuts it
   * down) from now. The loop runs tasks one at a time, in order, on one daemon thread, like
   * {@code Executors.newSingleThreadScheduledExecutor}.
   */
  public ScheduledExecutorService take(String name) {
    ScheduledThreadPoolExecutor loop;
    synchronized (this) {
      loop = spare;
      spare = null;
    }
    if (loop == null) {
      return newLoop(name);
    }
    loop.execute(() -> Thread.currentThread().setName(name)); // first in its queue: nothing of ours runs before it
    return loop;
  }

  /** Starts the next spare if there is none (and this is open). Called on a registration's loop, off every caller. */
  public void refill() {
    synchronized (this) {
      if (spare != null || closed) {
        return;
      }
    }
    ScheduledThreadPoolExecutor fresh = newLoop("muster-registrar-spare-" + SPARES.incrementAndGet());
    fresh.prestartCoreThread();
    boolean kept;
    synchronized (this) {
      kept = spare == null && !closed;
      if (kept) {
        spare = fresh;
      }
    }
    if (!kept) {
      fresh.shutdownNow(); // another refill won, or the registry closed meanwhile
    }
  }

  /** Whether a spare is ready (for tests). */
  synchronized boolean hasSpare() {
    return spare != null;
  }

  /** Shuts the spare down; later takes start their own loops, later refills do nothing. */
  @Override
  public void close() {
    ScheduledThreadPoolExecutor loop;
    synchronized (this) {
      closed = true;
      loop = spare;
      spare = null;
    }
    if (loop != null) {
      loop.shutdownNow();
    }
  }

  private static ScheduledThreadPoolExecutor newLoop(String name) {
    return new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
  }
}
