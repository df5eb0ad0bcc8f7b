package dev.muster.balance;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * A monotonic nano ticker that moves only when a test says so. Starts at a large, arbitrary value, as
 * {@code System.nanoTime()} may. Used by the balance, outlier, retry and call tests.
 *
 * <p>Not thread-safe; the test thread drives it.
 */
public final class FakeTicker implements LongSupplier {
  private long nanos = 7_000_000_000L;

  @Override
  public long getAsLong() {
    return nanos;
  }

  public void advance(Duration d) {
    nanos += d.toNanos();
  }
}
