package dev.muster.chaos;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a run exercised, counted across schedules: how many publications were compared with etcd, how many
 * resyncs, lease losses, refused duplicates, 18089 shapes ... so the summary shows the faults really happened.
 *
 * <p>Thread-safe.
 */
final class Tally {
  private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

  void add(String what, long n) {
    if (n != 0) {
      counts.computeIfAbsent(what, k -> new LongAdder()).add(n);
    }
  }

  void add(String what) {
    add(what, 1);
  }

  long get(String what) {
    LongAdder a = counts.get(what);
    return a == null ? 0 : a.sum();
  }

  /** Every count, by name. */
  Map<String, Long> snapshot() {
    Map<String, Long> out = new TreeMap<>();
    counts.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }
}
