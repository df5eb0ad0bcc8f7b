package dev.muster.call;

import dev.muster.balance.FakeTicker;
import java.time.Duration;
import java.util.Comparator;
import java.util.PriorityQueue;

/**
 * A {@link Scheduler} on a {@link FakeTicker}: tasks run only when a test calls {@link #advance}, in due order, on
 * the test's thread, with the ticker moved to each task's due time first.
 *
 * <p>Not thread-safe; the test thread drives it. Shared with the client tests.
 */
public final class FakeScheduler implements Scheduler {
  private final FakeTicker ticker;
  private final PriorityQueue<Task> queue =
      new PriorityQueue<>(Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq));
  private long seq;

  private record Task(long due, long seq, Runnable action) {}

  public FakeScheduler(FakeTicker ticker) {
    this.ticker = ticker;
  }

  @Override
  public Runnable schedule(Runnable task, Duration delay) {
    Task t = new Task(ticker.getAsLong() + delay.toNanos(), seq++, task);
    queue.add(t);
    return () -> queue.remove(t);
  }

  public void advance(Duration d) {
    long target = ticker.getAsLong() + d.toNanos();
    while (!queue.isEmpty() && queue.peek().due() <= target) {
      Task t = queue.poll();
      ticker.advance(Duration.ofNanos(Math.max(0, t.due() - ticker.getAsLong())));
      t.action().run();
    }
    ticker.advance(Duration.ofNanos(target - ticker.getAsLong()));
  }

  /** Deadlines scheduled and neither run nor cancelled. */
  public int pending() {
    return queue.size();
  }
}
