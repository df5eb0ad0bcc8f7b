package dev.muster.registry.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * The registrar's loop on a fake monotonic clock: a {@link RegistrarDriver.Timer} whose tasks run only when a test
 * calls {@link #advance}, in due-time order (ties in scheduling order), on the test's thread. {@link #spend} moves
 * time forward without running anything, as a blocking etcd call does to the real loop.
 *
 * <p>Not thread-safe; the test thread drives it.
 */
final class FakeLoop implements RegistrarDriver.Timer {
  /** Deliberately not zero: a real {@code System.nanoTime()} can be any value. */
  private static final long START_NANOS = 5_000_000_000L;
  private static final Instant START_INSTANT = Instant.parse("2026-12-01T10:00:00Z");

  private final PriorityQueue<Task> queue =
      new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq));
  private long nanos = START_NANOS;
  private long seq;

  private static final class Task {
    final long due;
    final long seq;
    final Runnable action;

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
    return () -> queue.remove(t);
  }

  /** Moves the clock forward by {@code d}, running every task that falls due, in order, at its due time. */
  void advance(Duration d) {
    long target = nanos + d.toNanos();
    while (!queue.isEmpty() && queue.peek().due <= target) {
      Task t = queue.poll();
      nanos = Math.max(nanos, t.due);
      t.action.run();
    }
    nanos = Math.max(nanos, target);
  }

  /** Time passes inside a call on the loop: nothing else runs meanwhile. */
  void spend(Duration d) {
    nanos += d.toNanos();
  }

  long nanoTime() {
    return nanos;
  }

  Duration elapsed() {
    return Duration.ofNanos(nanos - START_NANOS);
  }

  int pendingTasks() {
    return queue.size();
  }

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
        return START_INSTANT.plusNanos(nanos - START_NANOS);
      }
    };
  }
}
