package dev.muster.bench.curator;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;

/**
 * {@code n} consumers of one service, each modelling a consumer process: its own {@code CuratorFramework} (own
 * ZooKeeper connection and session), its own {@code ServiceDiscovery} and a started {@code ServiceCache} whose
 * changes go to a {@link CacheTracker}.
 *
 * <p>Not thread-safe: opened and closed by the measuring thread (which closes the clients on a short-lived pool).
 * The caches call the tracker on their clients' threads.
 */
final class Consumers implements AutoCloseable {
  private static final int CLOSERS = 16;
  private static final Duration CLOSE_LIMIT = Duration.ofSeconds(30);

  private final List<CuratorFramework> clients = new ArrayList<>();
  private final List<ServiceDiscovery<String>> discoveries = new ArrayList<>();
  private final List<ServiceCache<String>> caches = new ArrayList<>();

  private Consumers() {}

  /**
   * Connects {@code n} clients (all started first, then awaited, so the session handshakes overlap) and starts a
   * cache on {@code service} in each; {@code ServiceCache.start()} returns once its initial load is done.
   */
  static Consumers open(int n, String connect, Duration sessionTimeout, String service, CacheTracker tracker) {
    Consumers consumers = new Consumers();
    try {
      for (int i = 0; i < n; i++) {
        consumers.clients.add(Curators.client(connect, sessionTimeout));
      }
      for (CuratorFramework client : consumers.clients) {
        Curators.awaitConnected(client);
      }
      for (int i = 0; i < n; i++) {
        ServiceDiscovery<String> discovery = Curators.discovery(consumers.clients.get(i));
        consumers.discoveries.add(discovery);
        ServiceCache<String> cache = discovery.serviceCacheBuilder().name(service).build();
        cache.addListener(tracker.listener(i, cache));
        Curators.call("start ServiceCache " + i + " of " + n, () -> {
          cache.start();
          return null;
        });
        consumers.caches.add(cache);
      }
      return consumers;
    } catch (RuntimeException e) {
      consumers.close();
      throw e;
    }
  }

  /** The first client, e.g. to read the session timeout ZooKeeper negotiated. */
  CuratorFramework firstClient() {
    return clients.get(0);
  }

  ServiceCache<String> cache(int index) {
    return caches.get(index);
  }

  /**
   * Closes caches, then discoveries, then clients. The clients close on up to {@value #CLOSERS} threads at once:
   * each close waits about a tenth of a second for ZooKeeper's client to shut down, which one after another would
   * add more than ten seconds to every 100-consumer step.
   */
  @Override
  public void close() {
    caches.forEach(Curators::closeQuietly);
    discoveries.forEach(Curators::closeQuietly);
    if (!clients.isEmpty()) {
      ExecutorService closers = Executors.newFixedThreadPool(Math.min(CLOSERS, clients.size()));
      clients.forEach(client -> closers.execute(() -> Curators.closeQuietly(client)));
      closers.shutdown();
      try {
        closers.awaitTermination(CLOSE_LIMIT.toSeconds(), TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    caches.clear();
    discoveries.clear();
    clients.clear();
  }
}
