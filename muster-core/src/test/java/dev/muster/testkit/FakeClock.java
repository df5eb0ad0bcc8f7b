package dev.muster.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A fake monotonic clock with a task queue, for the sans-I/O drivers' {@code Timer} seams: tasks run only when a
 * test calls {@link #advance}, in due-time order (ties in scheduling order), on the test's thread. The wall clock
 * ({@link #clock()}) and the monotonic one ({@link #nanoTime()}) move together. {@link #spend} moves time without
 * running anything, as a blocking call does to a real loop.
 *
 * <p>Not thread-safe; the test thread drives it.
 */
public class FakeClock {
  private final long startNanos;
  private final Instant startInstant;
  private final PriorityQueue<Task> queue =
      new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq));
  private long nanos;
  private long seq;

  private static final class Task {
    final long due;
    final long seq;
    final Runnable action;
    boolean cancelled;

    Task(long due, long seq, Runnable action) {
      this.due = due;
      this.seq = seq;
      this.action = action;
    }
  }

  /** {@code startNanos} deliberately not zero: a real {@code System.nanoTime()} can be any value. */
  protected FakeClock(long startNanos, Instant startInstant) {
    this.startNanos = startNanos;
    this.startInstant = startInstant;
    this.nanos = startNanos;
  }

  /** Runs {@code task} once {@code delay} has passed; the returned action cancels it. */
  public Runnable schedule(Runnable task, Duration delay) {
    if (delay.isNegative()) {
      throw new AssertionError("negative delay " + delay);
    }
    Task t = new Task(nanos + delay.toNanos(), seq++, task);
    queue.add(t);
    return () -> {
      t.cancelled = true;
      queue.remove(t);
    };
  }

  /** Moves both clocks forward by {@code d}, running every task that falls due, in order, at its due time. */
  public void advance(Duration d) {
    long target = nanos + d.toNanos();
    while (!queue.isEmpty() && queue.peek().due <= target) {
      Task t = queue.poll();
      nanos = Math.max(nanos, t.due);
      if (!t.cancelled) {
        t.action.run();
      }
    }
    nanos = Math.max(nanos, target);
  }

  /** Time passes inside a call on the loop: nothing else runs meanwhile. */
  public void spend(Duration d) {
    nanos += d.toNanos();
  }

  public long nanoTime() {
    return nanos;
  }

  /** Time since this clock was made. */
  public Duration elapsed() {
    return Duration.ofNanos(nanos - startNanos);
  }

  public Instant now() {
    return startInstant.plusNanos(nanos - startNanos);
  }

  /** Tasks scheduled and neither run nor cancelled. */
  public int pendingTasks() {
    return queue.size();
  }

  /** A wall clock that reads this clock's time. */
  public Clock clock() {
    return new Clock() {
      @Override
      public ZoneId getZone() {
        return ZoneOffset.UTC;
      }

      @Override
      public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException();
      }

      @Override
      public Instant instant() {
        return now();
      }
    };
  }
}
