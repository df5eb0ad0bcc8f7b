package dev.muster.bench.scale;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Wait;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * {@code jvms} watcher JVMs ({@link ScaleWatchers}, or Curator's) holding {@code total} caches of one service
 * between them, read through their JSON lines. Closing it stops every JVM by pid.
 *
 * <p>Not thread-safe: the bench's measuring thread only.
 */
final class WatcherFleet implements AutoCloseable {
  /**
   * Each watcher JVM: the serial collector (four JVMs and etcd share two cores: no parallel GC threads fighting
   * them) and room for its caches.
   */
  static final List<String> FLAGS = List.of("-Xmx768m", "-XX:+UseSerialGC");

  /** How often the JVMs' logs are read: the figures come from their timestamps, not from this loop. */
  private static final Duration POLL = Duration.ofMillis(50);

  private final List<ChildProcess> jvms = new ArrayList<>();
  private final int perJvm;

  /** Muster's watchers ({@link ScaleWatchers}) on {@code endpoints}. */
  static WatcherFleet muster(Path dir, String name, String endpoints, String service, int total, int jvmCount,
      boolean jitter) {
    return new WatcherFleet(dir, name, ScaleWatchers.class.getName(), total, jvmCount,
        perJvm -> List.of(endpoints, service, Integer.toString(perJvm), jitter ? "jitter" : "no-jitter"));
  }

  /** Curator's watchers ({@link dev.muster.bench.curator.CuratorWatchers}) on ZooKeeper at {@code connect}. */
  static WatcherFleet curator(Path dir, String name, String connect, String service, int total, int jvmCount,
      Duration sessionTimeout) {
    return new WatcherFleet(dir, name, dev.muster.bench.curator.CuratorWatchers.class.getName(), total, jvmCount,
        perJvm -> List.of(connect, service, Integer.toString(perJvm), Long.toString(sessionTimeout.toMillis())));
  }

  private WatcherFleet(Path dir, String name, String mainClass, int total, int jvmCount,
      java.util.function.IntFunction<List<String>> args) {
    this.perJvm = total / jvmCount;
    try {
      for (int i = 0; i < jvmCount; i++) {
        jvms.add(Jvms.start(dir, name + "-" + i, FLAGS, mainClass, args.apply(perJvm)));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  int caches() {
    return perJvm * jvms.size();
  }

  void awaitReady(Duration limit) {
    Wait.until(caches() + " caches in " + jvms.size() + " JVMs to be ready", limit, POLL, () -> {
      checkAlive();
      return jvms.stream().allMatch(j -> j.json().has("ready"));
    });
  }

  /** The slowest JVM's time from its first cache to all its caches ready. */
  long readyMillis() {
    return jvms.stream().mapToLong(j -> ready(j).path("ready_ms").asLong()).max().orElse(-1);
  }

  /** Heap after GC per cache, averaged over the JVMs: (after the caches − before them) / caches. */
  double heapPerCache() {
    return jvms.stream().mapToDouble(j -> {
      JsonNode r = ready(j);
      return (r.path("heap_after").asDouble() - r.path("heap_before").asDouble()) / perJvm;
    }).average().orElse(Double.NaN);
  }

  /** Threads in the busiest JVM once its caches were ready. */
  long threads() {
    return jvms.stream().mapToLong(j -> ready(j).path("threads").asLong()).max().orElse(-1);
  }

  /** When the last of all the caches had {@code id} (epoch µs), waiting up to {@code limit}. */
  long awaitSeen(String id, Duration limit) {
    Wait.until(id + " in all " + caches() + " caches", limit, POLL, () -> {
      checkAlive();
      return lastSeen(id).isPresent();
    });
    return lastSeen(id).getAsLong();
  }

  private OptionalLong lastSeen(String id) {
    long last = 0;
    for (ChildProcess j : jvms) {
      OptionalLong t = j.json().events("seen").stream().filter(l -> id.equals(l.path("id").asText()))
          .mapToLong(l -> l.path("last_us").asLong()).findFirst();
      if (t.isEmpty()) {
        return OptionalLong.empty();
      }
      last = Math.max(last, t.getAsLong());
    }
    return OptionalLong.of(last);
  }

  /** Waits until a stats line written after {@code afterMicros} says no cache is stale, in every JVM. */
  void awaitNoneStale(long afterMicros, Duration limit) {
    Wait.until("no stale cache in " + jvms.size() + " JVMs", limit, POLL, () -> {
      checkAlive();
      return jvms.stream().allMatch(j -> j.json().events("stats").stream()
          .filter(l -> micros(l) > afterMicros).anyMatch(l -> l.path("stale").asInt() == 0));
    });
  }

  /** When each cache that went stale after {@code afterMicros} recovered (epoch µs), over every JVM. */
  List<Long> recoveries(long afterMicros) {
    List<Long> all = new ArrayList<>();
    jvms.stream().flatMap(j -> j.json().events("recovered_all").stream())
        .filter(l -> l.path("ts_us").asLong() > afterMicros)
        .forEach(l -> l.path("recovered_us").forEach(t -> all.add(t.asLong())));
    return all;
  }

  /** Caches that went stale after {@code afterMicros}, counted at their recovery. */
  long wentStale(long afterMicros) {
    return jvms.stream().flatMap(j -> j.json().events("recovered_all").stream())
        .filter(l -> l.path("ts_us").asLong() > afterMicros).mapToLong(l -> l.path("caches_stale").asLong()).sum();
  }

  /** Resyncs summed over every cache, as of each JVM's newest stats line. */
  long resyncs() {
    return jvms.stream().mapToLong(j -> {
      List<JsonNode> stats = j.json().events("stats");
      return stats.isEmpty() ? 0 : stats.get(stats.size() - 1).path("resyncs").asLong();
    }).sum();
  }

  /**
   * Each JVM's connection counters ({@code EtcdRegistry.connectionStats()}, {@code connection} in its stats lines)
   * as of its newest stats line; an empty map for a JVM that has written none (or a Curator JVM).
   */
  List<Map<String, Long>> connectionStats() {
    List<Map<String, Long>> all = new ArrayList<>();
    for (ChildProcess j : jvms) {
      List<JsonNode> stats = j.json().events("stats");
      Map<String, Long> counters = new LinkedHashMap<>();
      if (!stats.isEmpty()) {
        stats.get(stats.size() - 1).path("connection").fields()
            .forEachRemaining(e -> counters.put(e.getKey(), e.getValue().asLong()));
      }
      all.add(counters);
    }
    return all;
  }

  /** Waits until every JVM has written a stats line after {@code afterMicros} (they write one a second). */
  void awaitStatsAfter(long afterMicros, Duration limit) {
    Wait.until("a stats line from each of " + jvms.size() + " JVMs", limit, POLL, () -> {
      checkAlive();
      return jvms.stream().allMatch(j -> {
        List<JsonNode> stats = j.json().events("stats");
        return !stats.isEmpty() && micros(stats.get(stats.size() - 1)) > afterMicros;
      });
    });
  }

  private static long micros(JsonNode line) {
    java.time.Instant ts = JsonLog.ts(line);
    return ts.getEpochSecond() * 1_000_000 + ts.getNano() / 1_000;
  }

  private static JsonNode ready(ChildProcess j) {
    return j.json().firstEvent("ready").orElseThrow(() -> new BenchException(j.name() + " is not ready"));
  }

  private void checkAlive() {
    for (ChildProcess j : jvms) {
      if (!j.isAlive()) {
        throw new BenchException(j.name() + " exited: " + j.stderrTail());
      }
    }
  }

  @Override
  public void close() {
    jvms.forEach(ChildProcess::close);
  }
}
