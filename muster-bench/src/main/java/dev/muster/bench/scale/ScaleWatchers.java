package dev.muster.bench.scale;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.bench.support.Heap;
import dev.muster.bench.support.WatcherLines;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A consumer JVM of the scale bench: one {@link EtcdRegistry} (one gRPC connection) holding {@code CACHES} caches
 * of one service. It prints JSON lines to stdout:
 * <ul>
 *   <li>{@code ready}: every cache has its first set; the time that took, and heap after GC before and after
 *       the caches were built (their difference over the count is the heap per cache);
 *   <li>{@code seen}: an instance id has reached every one of the caches, with the wall-clock time (epoch
 *       microseconds, the same host clock as the bench's) at which the first and the last cache had it;
 *   <li>{@code recovered_all}: after some caches went stale, the last of them recovered, with when each of them
 *       did (epoch µs);
 *   <li>{@code stats}, once a second: caches stale now, recoveries so far, resyncs summed over the caches, client
 *       replacements so far ({@code reconnects}) and the connection's counters ({@code connection}: the keys of
 *       {@link EtcdRegistry#connectionStats()}, replacements by reason and what became of the failure reports).
 * </ul>
 *
 * <p>Usage: {@code ScaleWatchers ENDPOINTS SERVICE CACHES jitter|no-jitter}. {@code no-jitter} builds the caches
 * with {@link NegativeControls#watchWithoutJitter} (the storm's control). It runs until it is stopped.
 *
 * <p>Listeners run on the caches' notifiers (the shared delivery pool); lines go through one lock.
 */
public final class ScaleWatchers {
  private final int caches;
  private final WatcherLines out;
  private final boolean[] stale;
  /** When each cache last recovered (epoch µs), and whether it went stale in the current episode. */
  private final long[] recoveredAt;
  private final boolean[] inEpisode;
  private final AtomicInteger staleNow = new AtomicInteger();
  private final AtomicLong recoveries = new AtomicLong();
  private final AtomicInteger staleThisEpisode = new AtomicInteger();

  private ScaleWatchers(int caches, PrintStream out) {
    this.caches = caches;
    this.out = new WatcherLines(out, caches);
    this.stale = new boolean[caches];
    this.recoveredAt = new long[caches];
    this.inEpisode = new boolean[caches];
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 4 || !(args[3].equals("jitter") || args[3].equals("no-jitter"))) {
      System.err.println("usage: ScaleWatchers ENDPOINTS SERVICE CACHES jitter|no-jitter");
      System.exit(2);
    }
    int count = Integer.parseInt(args[2]);
    ScaleWatchers w = new ScaleWatchers(count, System.out);
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(args[0]));
    // Connected before the heap is measured, as CuratorWatchers' client is: EtcdRegistry.connect is lazy, and the
    // client, its channel and the watch stream made by the first cache are the JVM's, not the caches'. Until
    // 651f402 they were counted in the caches' figure (about 1 kB a cache in 2,500).
    try (EndpointCache warmup = registry.watch(CacheConfig.builder(args[1] + "-warmup").build())) {
      if (!warmup.awaitReady(Duration.ofMinutes(1))) {
        System.err.println("ScaleWatchers: the warm-up cache had no first set after a minute");
        System.exit(4);
      }
    }
    long heapBefore = Heap.usedAfterGc();
    long t0 = System.nanoTime();
    List<EndpointCache> built = new ArrayList<>(count);
    CacheConfig config = CacheConfig.builder(args[1]).build();
    for (int i = 0; i < count; i++) {
      EndpointListener listener = w.listener(i);
      built.add(args[3].equals("jitter") ? registry.watch(config, listener)
          : NegativeControls.watchWithoutJitter(registry, config, listener));
    }
    for (EndpointCache c : built) {
      if (!c.awaitReady(Duration.ofMinutes(5))) {
        System.err.println("ScaleWatchers: a cache had no first set after 5 minutes");
        System.exit(4);
      }
    }
    long readyNanos = System.nanoTime() - t0;
    long heapAfter = Heap.usedAfterGc();
    w.out.ready(count, readyNanos, heapBefore, heapAfter);
    while (true) {
      Thread.sleep(1000);
      long resyncs = 0;
      for (EndpointCache c : built) {
        resyncs += c.resyncCount();
      }
      ObjectNode stats = JsonLog.entry("stats", Instant.now()).put("stale", w.staleNow.get())
          .put("recoveries", w.recoveries.get()).put("resyncs", resyncs).put("reconnects", registry.reconnects());
      ObjectNode connection = stats.putObject("connection");
      registry.connectionStats().forEach(connection::put);
      w.out.line(stats);
    }
  }

  private EndpointListener listener(int index) {
    return new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        if (delta.added().isEmpty()) {
          return;
        }
        long now = epochMicros();
        for (Instance in : delta.added()) {
          out.arrived(in.id(), now);
        }
      }

      @Override
      public void onStale(EndpointSet set, Instant since, String reason) {
        synchronized (stale) {
          if (!stale[index]) {
            stale[index] = true;
            inEpisode[index] = true;
            staleNow.incrementAndGet();
            staleThisEpisode.incrementAndGet();
          }
        }
      }

      @Override
      public void onRecovered(EndpointSet set, Duration staleFor) {
        ObjectNode all = null; // built under the lock, printed after it
        synchronized (stale) {
          if (!stale[index]) {
            return;
          }
          stale[index] = false;
          recoveredAt[index] = epochMicros();
          recoveries.incrementAndGet();
          if (staleNow.decrementAndGet() == 0) {
            all = JsonLog.entry("recovered_all", Instant.now()).put("ts_us", epochMicros())
                .put("caches_stale", staleThisEpisode.getAndSet(0));
            var each = all.putArray("recovered_us");
            for (int i = 0; i < caches; i++) {
              if (inEpisode[i]) {
                each.add(recoveredAt[i]);
                inEpisode[i] = false;
              }
            }
          }
        }
        if (all != null) {
          out.line(all);
        }
      }
    };
  }

  static long epochMicros() {
    return WatcherLines.epochMicros();
  }
}
