package dev.muster.internal;

import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Hands items to one consumer one at a time and in the order they were added, without holding a lock while it
 * calls the consumer.
 *
 * <p>Why: a component decides under its own lock and must call user code (a listener) after releasing it. Two
 * threads that each take "their" item and call the listener once they are out of the lock can be descheduled in
 * between, so the listener may see a later decision before an earlier one: the lab saw a prober's {@code probe_up}
 * of an endpoint printed before the {@code probe_down} it followed. Here the order is the order of {@link #add},
 * which the caller makes under its lock, and {@link #drain} delivers it.
 *
 * <p>Thread-safe. Contract: call {@link #add} where the order is decided (under the caller's lock) and
 * {@link #drain} after releasing every lock. {@code drain} delivers everything added so far, unless another thread
 * is delivering at that moment: then that thread delivers it, right after what it is delivering, and this
 * {@code drain} returns at once. So the consumer is called by one thread at a time, on the thread that added an
 * item or on one that was delivering when it was added, and never sees two items at once. A consumer that
 * throws loses nothing of the rest: the throw is the consumer's to handle (wrap it; the health listeners are
 * wrapped by {@code HealthListener.guarded}), and items after it stay queued for the next {@code drain}.
 *
 * <p>The work-in-progress counter is the usual "drain loop" (one thread drains, others only count themselves in):
 * each {@code drain} adds one; the draining thread subtracts what it has seen after each pass and stops at zero,
 * so an item added while it delivers is delivered by it in the next pass.
 */
public final class SerialRelay<T> {
  private final Queue<T> queue = new ConcurrentLinkedQueue<>();
  private final AtomicInteger wip = new AtomicInteger();
  private final Consumer<? super T> consumer;

  public SerialRelay(Consumer<? super T> consumer) {
    this.consumer = Objects.requireNonNull(consumer, "consumer");
  }

  /** Queues {@code item}; call it where the order is decided. */
  public void add(T item) {
    queue.add(Objects.requireNonNull(item, "item"));
  }

  /** Delivers what is queued, in order, unless another thread is delivering now (it then delivers ours too). */
  public void drain() {
    if (wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    try {
      do {
        T item;
        while ((item = queue.poll()) != null) {
          consumer.accept(item);
        }
        missed = wip.addAndGet(-missed);
      } while (missed != 0);
    } catch (RuntimeException | Error e) {
      wip.set(0); // the next drain takes over; what is still queued waits for it
      throw e;
    }
  }
}
