package dev.muster.bench.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one system (Muster or Curator) measured in the side-by-side: latency samples and single values under the
 * names in {@link Metric}, notes (how something was measured) printed under the table, and the steps that failed.
 *
 * <p>Not thread-safe: filled by the measuring thread, read after.
 */
public final class SideResult {
  private final Map<String, Samples> latencies = new LinkedHashMap<>();
  private final Map<String, Double> values = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();

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

  /** A step could not be measured: its rows will be missing; noted as {@code "STEP: FAILED: WHY"}. */
  public void failed(String step, String why) {
    String line = step + ": FAILED: " + why;
    failures.add(line);
    notes.add(line);
  }

  public List<String> failures() {
    return failures;
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
