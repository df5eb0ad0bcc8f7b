package dev.muster.internal;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in submission order, on threads lent by a shared pool, or on the thread of a caller
 * that waits for its task anyway ({@link #runOrQueue}). A registration's loop is one (docs/design-registrations.md
 * §1–2): a thread per registration would sit parked between keepalives, and handing {@code register()}'s step to
 * it and back costs two thread wake-ups on the caller's path. Each endpoint cache's loop and notifier is one too
 * ({@code DeliveryPool.sequential}): Muster has this one serial executor (Guava's {@code SequentialExecutor},
 * which the caches used before, cannot run a task on its caller).
 *
 * <h2>Threading contract</h2>
 * Thread-safe: any thread may call {@link #execute} and {@link #runOrQueue}. Tasks never overlap, and each task
 * happens-before the next, whichever threads run them. Whoever runs tasks holds this executor's <b>run
 * permit</b>: a pool thread lent to its drain, or a caller inside {@link #runOrQueue}. Nothing else holds it.
 * Task code may therefore keep its state in plain fields, as on a single thread.
 *
 * <h2>The state word</h2>
 * {@code state} is the permit: {@code IDLE} (nobody holds it) or {@code RUNNING} (one thread holds it, or a drain
 * handed to the pool is about to take it). {@code owner} is the thread holding it while it runs a task (null
 * between tasks); it is only used to detect reentrance.
 * <pre>
 * IDLE    --execute(t): queue t, CAS IDLE-&gt;RUNNING--&gt;               RUNNING, a drain handed to the pool
 * IDLE    --runOrQueue(t), queue empty, CAS IDLE-&gt;RUNNING--&gt;       RUNNING, t runs on the caller (returns true)
 * RUNNING --execute(t) or runOrQueue(t)--&gt;                          RUNNING, t queued (runOrQueue returns false)
 * any     --runOrQueue(t) on the thread that holds the permit--&gt;    t queued, as execute (reentrance: never waits)
 * RUNNING --the caller's t done, queue not empty--&gt;                 RUNNING, a drain handed to the pool (the
 *                                                                   permit passes to it; the caller returns)
 * RUNNING --a drain or the caller finds the queue empty--&gt;          IDLE, then the queue is checked again: a task
 *                                                                   queued meanwhile takes the permit back (CAS)
 *                                                                   and a drain is handed to the pool
 * RUNNING --the pool refuses the drain--&gt;                           IDLE; the RejectedExecutionException goes to
 *                                                                   whoever handed it; the tasks stay queued for
 *                                                                   the next submission
 * </pre>
 *
 * <p>Why this is enough: an adder queues first and CASes second; the holder marks itself {@code IDLE} first and
 * looks at the queue second. So either the adder's CAS wins, or the holder sees the task; none is left behind.
 * Happens-before comes from the same edges: a task's writes precede the holder's volatile write of {@code IDLE} (or
 * its hand-over of the drain to the pool), which precedes the next holder's CAS (or the drain's start). The queue
 * is checked for emptiness before a caller takes the permit, so a task never overtakes one submitted before it by
 * the same thread.
 *
 * <p>A drain runs until the queue is empty. A task that throws a {@link RuntimeException} is logged and the next
 * runs; an {@link Error} releases the permit (handing the rest to the pool) and propagates. A drain clears a
 * task's interrupt before the next task and restores it when it ends, so one task's interrupt does not reach the
 * next; a caller's own interrupt is left alone.
 */
public final class SerialExecutor implements Executor {
  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);
  private static final int IDLE = 0;
  private static final int RUNNING = 1;
  private static final java.lang.invoke.VarHandle STATE;

  static {
    try {
      STATE = java.lang.invoke.MethodHandles.lookup().findVarHandle(SerialExecutor.class, "state", int.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Executor pool;
  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  /** IDLE or RUNNING (the run permit), through {@link #STATE}: a field, not an AtomicInteger (16 B per executor). */
  private volatile int state = IDLE;
  /** The thread running a task of this executor, or null; written only by that thread. */
  private volatile Thread owner;

  /** @param pool lends the threads a drain runs on; it may run several executors' drains at once */
  public SerialExecutor(Executor pool) {
    this.pool = Objects.requireNonNull(pool, "pool");
  }

  /** Queues {@code task}; it runs after every task submitted before it, on a pool thread. */
  @Override
  public void execute(Runnable task) {
    queue.add(Objects.requireNonNull(task, "task"));
    if (STATE.compareAndSet(this, IDLE, RUNNING)) {
      dispatch();
    }
  }

  /**
   * Runs {@code task} on the calling thread if this executor is idle with nothing queued, and returns true once it
   * has run; else queues it as {@link #execute} does and returns false at once. A caller that must wait for the
   * task's outcome waits on its own future either way (this method never blocks on other tasks). Called on the
   * thread that is running a task of this executor (a listener calling back in), it queues: that thread cannot wait
   * for itself.
   */
  public boolean runOrQueue(Runnable task) {
    Objects.requireNonNull(task, "task");
    Thread me = Thread.currentThread();
    if (owner == me || !queue.isEmpty() || !STATE.compareAndSet(this, IDLE, RUNNING)) {
      execute(task);
      return false;
    }
    owner = me;
    try {
      runOne(task);
    } finally {
      owner = null;
      release();
    }
    return true;
  }

  /** Whether the calling thread is running a task of this executor (so it must not wait for a later one). */
  public boolean inTask() {
    return owner == Thread.currentThread();
  }

  /** Held the permit and ran a task on a caller: hand what was queued meanwhile to the pool, or go idle. */
  private void release() {
    if (!queue.isEmpty()) {
      dispatch(); // still RUNNING: the permit passes to the drain
      return;
    }
    state = IDLE;
    if (!queue.isEmpty() && STATE.compareAndSet(this, IDLE, RUNNING)) {
      dispatch();
    }
  }

  private void dispatch() {
    try {
      pool.execute(this::drain); // made per hand-over, not kept: 16 B less for each of 20,000 executors
    } catch (RejectedExecutionException | Error e) {
      state = IDLE;
      throw e;
    }
  }

  /** A pool thread holding the permit: runs the queue until it is empty. */
  private void drain() {
    Thread me = Thread.currentThread();
    boolean interrupted = false;
    owner = me;
    try {
      while (true) {
        Runnable task = queue.poll();
        if (task == null) {
          owner = null;
          state = IDLE;
          if (queue.isEmpty() || !STATE.compareAndSet(this, IDLE, RUNNING)) {
            return;
          }
          owner = me;
          continue;
        }
        interrupted |= Thread.interrupted();
        try {
          runOne(task);
        } catch (Error e) {
          owner = null;
          release();
          throw e;
        }
      }
    } finally {
      if (interrupted || Thread.interrupted()) {
        me.interrupt();
      }
    }
  }

  private static void runOne(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("a task on a serial executor threw; the next one runs", e);
    }
  }

  @Override
  public String toString() {
    return "SerialExecutor[" + (state == IDLE ? "idle" : "running") + ", " + queue.size() + " queued]";
  }
}
