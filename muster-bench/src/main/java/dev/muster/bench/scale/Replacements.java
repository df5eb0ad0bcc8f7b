package dev.muster.bench.scale;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What each consumer JVM's connection did over one storm: its {@code EtcdRegistry.connectionStats()} after the storm
 * minus before it. {@code replaced.<reason>} counts client replacements by the reason that allowed them;
 * {@code reports.<verdict>} what became of the caches' failure reports (docs/design-storms.md).
 *
 * @param perJvm one map per consumer JVM, in the fleet's order
 */
public record Replacements(List<Map<String, Long>> perJvm) {
  static final String REPLACED = "replaced.";
  static final String REPORTS = "reports.";

  public Replacements {
    perJvm = perJvm.stream().map(m -> java.util.Collections.unmodifiableMap(new LinkedHashMap<>(m))).toList();
  }

  /** After minus before, key by key, per JVM; a key missing before counts from zero. */
  static Replacements between(List<Map<String, Long>> before, List<Map<String, Long>> after) {
    if (before.size() != after.size()) {
      throw new IllegalArgumentException("counters of " + before.size() + " JVMs before the storm, " + after.size()
          + " after it");
    }
    List<Map<String, Long>> deltas = new ArrayList<>();
    for (int i = 0; i < after.size(); i++) {
      Map<String, Long> b = before.get(i);
      Map<String, Long> d = new LinkedHashMap<>();
      after.get(i).forEach((k, v) -> d.put(k, v - b.getOrDefault(k, 0L)));
      deltas.add(d);
    }
    return new Replacements(deltas);
  }

  /** Every key any JVM reported, in the order the first reported them. */
  Set<String> keys() {
    Set<String> keys = new LinkedHashSet<>();
    perJvm.forEach(m -> keys.addAll(m.keySet()));
    return keys;
  }

  long total(String key) {
    return perJvm.stream().mapToLong(m -> m.getOrDefault(key, 0L)).sum();
  }

  /** One JVM's count after another, {@code 1/1/1/1}. */
  String perJvm(String key) {
    return perJvm.stream().map(m -> Long.toString(m.getOrDefault(key, 0L))).collect(Collectors.joining("/"));
  }

  /**
   * {@code replacements per JVM: 1/1/1/1 accepts_again, 0/0/0/0 suspect; reports: 2 replaced, 9,870 down, ...}; or
   * a sentence saying the JVMs reported no counters.
   */
  String describe() {
    if (keys().isEmpty()) {
      return "replacements: the consumer JVMs reported no connection counters";
    }
    String replaced = keys().stream().filter(k -> k.startsWith(REPLACED))
        .map(k -> perJvm(k) + " " + k.substring(REPLACED.length())).collect(Collectors.joining(", "));
    String reports = keys().stream().filter(k -> k.startsWith(REPORTS))
        .map(k -> String.format(Locale.ROOT, "%,d %s", total(k), k.substring(REPORTS.length())))
        .collect(Collectors.joining(", "));
    return "replacements per JVM: " + replaced + "; failure reports: " + reports;
  }
}
