package dev.muster.dns.internal;

import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one endpoint cache per service of a namespace: reads the namespace's service names (keys only) every
 * refresh, opens a cache for a service that appeared and closes the cache of one that is gone. Each cache's
 * listener rebuilds that service's records on the cache's notifier and puts them in the zone.
 *
 * <p>Threading: the first {@link #refresh()} and {@link #awaitCaches} run on the thread starting the gateway, the
 * later refreshes on the gateway's one directory thread (started after them), and {@link #close()} after that
 * thread stopped: the map of open caches is confined to one thread at a time, without a lock.
 */
public final class ServiceDirectory implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServiceDirectory.class);

  private final EtcdRegistry registry;
  private final NamespaceZone zone;
  private final long ttl;
  private final long staleTtl;
  private final String localZone;
  private final Clock clock;
  private final Executor listenerExecutor; // null: the registry's delivery pool
  private final Map<String, Open> open = new HashMap<>(); // confined to the directory thread
  private boolean listed;
  private String lastProblem;

  /** {@code published} opens once the service's first set is in the zone, not merely in its cache. */
  private record Open(NamespaceZone.Feed feed, EndpointCache cache, CountDownLatch published) {}

  public ServiceDirectory(EtcdRegistry registry, NamespaceZone zone, long ttlSeconds, long staleTtlSeconds,
      String localZone, Clock clock) {
    this(registry, zone, ttlSeconds, staleTtlSeconds, localZone, clock, null);
  }

  /** As above, the caches' listeners run on {@code listenerExecutor} (a test's slow one), null for the default. */
  ServiceDirectory(EtcdRegistry registry, NamespaceZone zone, long ttlSeconds, long staleTtlSeconds,
      String localZone, Clock clock, Executor listenerExecutor) {
    this.listenerExecutor = listenerExecutor;
    this.registry = registry;
    this.zone = zone;
    this.ttl = ttlSeconds;
    this.staleTtl = staleTtlSeconds;
    this.localZone = localZone;
    this.clock = clock;
  }

  /** One pass: list the services, open and close caches to match. Never throws. */
  public void refresh() {
    Set<String> now;
    try {
      now = registry.services(zone.namespace());
    } catch (MusterException e) {
      zone.directoryStale(true);
      if (!e.getMessage().equals(lastProblem)) {
        log.warn("cannot list the services of namespace {} (the zone keeps serving what it has): {}",
            zone.namespace(), e.getMessage());
        lastProblem = e.getMessage();
      }
      return;
    } catch (RuntimeException e) {
      zone.directoryStale(true);
      log.error("listing the services of namespace {} failed", zone.namespace(), e);
      return;
    }
    lastProblem = null;
    for (String service : now) {
      if (!open.containsKey(service)) {
        open(service);
      }
    }
    for (String service : List.copyOf(open.keySet())) {
      if (!now.contains(service)) {
        Open o = open.remove(service);
        zone.remove(o.feed());
        o.cache().close();
        log.info("service {}/{} is gone: its cache is closed and its names are no longer served",
            zone.namespace(), service);
      }
    }
    zone.directoryStale(false);
    listed = true;
  }

  /**
   * Waits up to {@code timeout} until the first set of every cache opened so far is in the zone; false if one is not,
   * or the services were never listed. Called by the starting thread, before the directory thread runs.
   *
   * <p>A cache is ready when it holds its first set, but the zone gets the set only when the cache's listener has run
   * on the delivery pool, later: waiting for the cache alone let a query just after the start find no records (the
   * suite, on a loaded machine, saw NXDOMAIN for a service with three instances).
   */
  public boolean awaitCaches(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    try {
      for (Open o : List.copyOf(open.values())) {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !o.published().await(left, TimeUnit.NANOSECONDS)) {
          return false;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
    return listed;
  }

  private void open(String service) {
    NamespaceZone.Feed feed = new NamespaceZone.Feed(service);
    CountDownLatch published = new CountDownLatch(1);
    EndpointListener listener = new EndpointListener() {
      private Instant staleSince; // the cache's notifier only
      private EndpointSet last = EndpointSet.EMPTY;

      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        last = set;
        publish();
      }

      @Override
      public void onStale(EndpointSet set, Instant since, String reason) {
        last = set;
        staleSince = since;
        publish();
      }

      @Override
      public void onRecovered(EndpointSet set, Duration staleFor) {
        last = set;
        staleSince = null;
        publish();
      }

      @Override
      public void onFailed(EndpointSet set, MusterException why) {
        last = set;
        staleSince = staleSince == null ? clock.instant() : staleSince;
        log.error("the cache of {}/{} stopped: {} (its last set is served, stale)", zone.namespace(), service,
            why.getMessage());
        publish();
      }

      private void publish() {
        zone.put(feed, ServiceRecords.build(service, zone.origin(), last, staleSince,
            staleSince == null ? ttl : staleTtl, localZone));
        published.countDown();
      }
    };
    CacheConfig.Builder config = CacheConfig.builder(service).namespace(zone.namespace());
    if (listenerExecutor != null) {
      config.listenerExecutor(listenerExecutor);
    }
    EndpointCache cache = registry.open(config.build(), listener);
    open.put(service, new Open(feed, cache, published));
    log.info("serving service {}/{}", zone.namespace(), service);
  }

  /** Closes every cache (after the directory thread stopped). */
  @Override
  public void close() {
    for (Open o : open.values()) {
      zone.remove(o.feed());
      o.cache().close();
    }
    open.clear();
  }
}
