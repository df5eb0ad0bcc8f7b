package dev.muster.bench.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one system (Muster or Curator) measured in the side-by-side: latency samples and single values under the
 * names in {@link Metric}, plus notes (how something was measured, what went wrong) printed under the table.
 *
 * <p>Not thread-safe: filled by the measuring thread, read after.
 */
public final class SideResult {
  private final Map<String, Samples> latencies = new LinkedHashMap<>();
  private final Map<String, Double> values = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();

  /** The samples of {@code metric}, created empty on first use. */
  public Samples latency(String metric) {
    return latencies.computeIfAbsent(metric, k -> new Samples());
  }

  public void value(String metric, double value) {
    values.put(metric, value);
  }

  public void note(String text) {
    notes.add(text);
  }

  public Map<String, Samples> latencies() {
    return latencies;
  }

  public Map<String, Double> values() {
    return values;
  }

  public List<String> notes() {
    return notes;
  }
}
