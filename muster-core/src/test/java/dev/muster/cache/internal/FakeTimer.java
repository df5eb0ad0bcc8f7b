package dev.muster.cache.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A {@link CacheDriver.Timer} on a fake monotonic clock: tasks wait in a priority queue and run only when a test
 * calls {@link #advance}, in due-time order (ties in scheduling order), on the test's thread. The wall clock
 * ({@link #clock()}) and the monotonic one ({@link #nanoTime()}) move together.
 *
 * <p>Not thread-safe; the test thread drives it.
 */
final class FakeTimer implements CacheDriver.Timer {
  /** Deliberately not zero: a real {@code System.nanoTime()} can be any value. */
  private static final long START_NANOS = 7_000_000_000L;
  private static final Instant START_INSTANT = Instant.parse("2026-11-29T10:00:00Z");

  private final PriorityQueue<Task> queue =
      new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq));
  private long nanos = START_NANOS;
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

  @Override
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
  void advance(Duration d) {
    long target = nanos + d.toNanos();
    while (!queue.isEmpty() && queue.peek().due <= target) {
      Task t = queue.poll();
      nanos = Math.max(nanos, t.due);
      if (!t.cancelled) {
        t.action.run();
      }
    }
    nanos = target;
  }

  long nanoTime() {
    return nanos;
  }

  /** Time since this timer was made. */
  Duration elapsed() {
    return Duration.ofNanos(nanos - START_NANOS);
  }

  Instant now() {
    return START_INSTANT.plusNanos(nanos - START_NANOS);
  }

  /** Tasks scheduled and neither run nor cancelled. */
  int pendingTasks() {
    return queue.size();
  }

  /** A wall clock that reads this timer's time. */
  Clock clock() {
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
