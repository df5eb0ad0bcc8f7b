package dev.muster.bench.support;

import java.util.ArrayList;
import java.util.List;

/**
 * Latency samples of one end-to-end measurement, in milliseconds, with exact nearest-rank percentiles. The runs
 * here take tens to hundreds of samples, so sorting them is exact and cheap (HdrHistogram buys nothing at this size).
 *
 * <p>Not thread-safe: one measuring thread adds; read the figures after it is done.
 */
public final class Samples {
  private final List<Double> millis = new ArrayList<>();
  private double[] sorted; // derived from millis, rebuilt after an add

  public void add(double ms) {
    millis.add(ms);
    sorted = null;
  }

  /** Adds {@code nanos} (a {@link System#nanoTime()} difference) as milliseconds. */
  public void addNanos(long nanos) {
    add(nanos / 1_000_000.0);
  }

  public int count() {
    return millis.size();
  }

  public boolean isEmpty() {
    return millis.isEmpty();
  }

  public double min() {
    return percentile(0);
  }

  public double p50() {
    return percentile(50);
  }

  public double p99() {
    return percentile(99);
  }

  public double max() {
    return percentile(100);
  }

  /** Nearest-rank percentile; NaN when empty. */
  public double percentile(double p) {
    if (millis.isEmpty()) {
      return Double.NaN;
    }
    if (sorted == null) {
      sorted = millis.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    }
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
