package dev.muster.bench.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polling waits with a deadline, for set-up steps (never for the measured interval itself). */
public final class Wait {
  private Wait() {}

  /** Polls {@code condition} every millisecond until true; throws {@link BenchException} naming {@code what}. */
  public static void until(String what, Duration limit, BooleanSupplier condition) {
    until(what, limit, Duration.ofMillis(1), condition);
  }

  /**
   * As {@link #until(String, Duration, BooleanSupplier)}, polling every {@code period}: for a condition that is
   * costly to check (reading child processes' logs) while what it waits for is timed elsewhere.
   */
  public static void until(String what, Duration limit, Duration period, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new BenchException("timed out after " + limit.toMillis() + " ms waiting for " + what);
      }
      sleep(period);
    }
  }

  public static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted");
    }
  }
}
