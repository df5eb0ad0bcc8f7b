package dev.muster.call;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs a task once after a delay; the call engine uses it for attempt deadlines, so tests can drive deadlines from a
 * fake clock instead of sleeping. Same shape as the cache's {@code CacheDriver.Timer}.
 *
 * <p>Implementations must be thread-safe: {@link #schedule} and the cancel actions are called from any thread.
 */
@FunctionalInterface
public interface Scheduler {
  /**
   * Runs {@code task} once, on a scheduler thread, after {@code delay}. Returns an action that cancels it; running
   * the action after the task ran, or twice, does nothing.
   */
  Runnable schedule(Runnable task, Duration delay);

  /** A scheduler on {@code executor}; cancelled tasks are cancelled there with {@code cancel(false)}. */
  static Scheduler of(ScheduledExecutorService executor) {
    return (task, delay) -> {
      ScheduledFuture<?> f = executor.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
      return () -> f.cancel(false);
    };
  }

  /**
   * One process-wide daemon thread ({@code muster-deadlines}) that only completes futures: the tasks the engine gives
   * it are short (a retry's {@link Attempt#run} must not block).
   */
  static Scheduler system() {
    return SystemScheduler.INSTANCE;
  }
}

/** Holder of {@link Scheduler#system()}: created on first use. */
final class SystemScheduler {
  static final Scheduler INSTANCE;

  static {
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "muster-deadlines");
      t.setDaemon(true);
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
    INSTANCE = Scheduler.of(executor);
  }

  private SystemScheduler() {}
}
