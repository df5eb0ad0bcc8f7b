package dev.muster.bench.curator;

import dev.muster.bench.support.Heap;
import dev.muster.bench.support.WatcherLines;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

/**
 * The Curator side of the scale bench's watchers: one {@code CuratorFramework} (one ZooKeeper connection and
 * session) holding {@code CACHES} started {@code ServiceCache}s of one service, each with Curator's defaults (its
 * own executor thread). It prints the same JSON lines as Muster's {@code ScaleWatchers}: {@code ready} (with heap
 * per cache and the thread count), {@code seen} (an id reached every cache: epoch µs of the first and the last),
 * and {@code stats} once a second.
 *
 * <p>Usage: {@code CuratorWatchers CONNECT SERVICE CACHES SESSION_TIMEOUT_MS}. It runs until it is stopped.
 */
public final class CuratorWatchers {
  private final WatcherLines out;

  private CuratorWatchers(int caches, PrintStream out) {
    this.out = new WatcherLines(out, caches);
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4) {
      System.err.println("usage: CuratorWatchers CONNECT SERVICE CACHES SESSION_TIMEOUT_MS");
      System.exit(2);
    }
    int count = Integer.parseInt(args[2]);
    CuratorWatchers w = new CuratorWatchers(count, System.out);
    CuratorFramework client = Curators.connected(args[0], Duration.ofMillis(Long.parseLong(args[3])));
    ServiceDiscovery<String> discovery = Curators.discovery(client);
    long heapBefore = Heap.usedAfterGc();
    long t0 = System.nanoTime();
    List<ServiceCache<String>> built = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      ServiceCache<String> cache = discovery.serviceCacheBuilder().name(args[1]).build();
      cache.addListener(w.listener(cache));
      Curators.call("start ServiceCache " + i, () -> {
        cache.start(); // returns once its first load is done
        return null;
      });
      built.add(cache);
    }
    long readyNanos = System.nanoTime() - t0;
    long heapAfter = Heap.usedAfterGc();
    w.out.ready(count, readyNanos, heapBefore, heapAfter);
    while (true) {
      Thread.sleep(1000);
      w.line(JsonLog.entry("stats", Instant.now()).put("stale", 0).put("resyncs", 0));
    }
  }

  private ServiceCacheListener listener(ServiceCache<String> cache) {
    Set<String> had = new HashSet<>(); // this cache's ids so far; its listener runs on one thread
    return new ServiceCacheListener() {
      @Override
      public void cacheChanged() {
        long now = WatcherLines.epochMicros();
        for (ServiceInstance<String> in : cache.getInstances()) {
          if (had.add(in.getId())) {
            out.arrived(in.getId(), now);
          }
        }
      }

      @Override
      public void stateChanged(CuratorFramework client, ConnectionState newState) {
        // the scale bench times arrivals only
      }
    };
  }

  private void line(com.fasterxml.jackson.databind.node.ObjectNode node) {
    out.line(node);
  }
}
