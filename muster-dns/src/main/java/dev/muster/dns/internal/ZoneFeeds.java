package dev.muster.dns.internal;

import dev.muster.MusterException;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.ServiceDirectory;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds the gateway's zones from the {@link ServiceDirectory}: each service's cache listener rebuilds that service's
 * records and puts them in its namespace's zone; a service that leaves is removed from it; a directory that cannot
 * read the services marks the zones' directory stale.
 *
 * <p>Threading: {@link #added}, {@link #removed} and {@link #listing} run on the directory's thread, which alone
 * touches the feeds; each cache's listener runs on that cache's notifier (one call at a time); {@link #awaitPublished}
 * on the thread starting the gateway. The zones are thread-safe.
 */
public final class ZoneFeeds implements ServiceDirectory.Listener {
  private static final Logger log = LoggerFactory.getLogger(ZoneFeeds.class);

  private final Map<String, NamespaceZone> zones;
  private final long ttl;
  private final long staleTtl;
  private final String localZone;
  private final Clock clock;
  private final TxtMetadata txtMetadata;
  private final Map<ServiceDirectory.Service, NamespaceZone.Feed> feeds = new HashMap<>(); // the directory thread's
  /** The services whose first set is in their zone (not merely in their cache). */
  private final Set<ServiceDirectory.Service> published = ConcurrentHashMap.newKeySet();

  public ZoneFeeds(Map<String, NamespaceZone> zones, long ttlSeconds, long staleTtlSeconds, String localZone,
      TxtMetadata txtMetadata, Clock clock) {
    this.txtMetadata = txtMetadata;
    this.zones = Map.copyOf(zones);
    this.ttl = ttlSeconds;
    this.staleTtl = staleTtlSeconds;
    this.localZone = localZone;
    this.clock = clock;
  }

  @Override
  public EndpointListener added(ServiceDirectory.Service s) {
    NamespaceZone zone = zones.get(s.namespace());
    if (zone == null) {
      return null; // not a namespace this gateway serves
    }
    NamespaceZone.Feed feed = new NamespaceZone.Feed(s.service());
    feeds.put(s, feed);
    log.info("serving service {}", s.path());
    return new EndpointListener() {
      private Instant staleSince; // this cache's notifier only
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
        log.error("the cache of {} stopped: {} (its last set is served, stale)", s.path(), why.getMessage());
        publish();
      }

      private void publish() {
        zone.put(feed, ServiceRecords.build(s.service(), zone.origin(), last, staleSince,
            staleSince == null ? ttl : staleTtl, localZone, txtMetadata));
        if (published.add(s)) {
          synchronized (ZoneFeeds.this) {
            ZoneFeeds.this.notifyAll();
          }
        }
      }
    };
  }

  @Override
  public void removed(ServiceDirectory.Service s) {
    NamespaceZone.Feed feed = feeds.remove(s);
    if (feed != null) {
      zones.get(s.namespace()).remove(feed);
      published.remove(s);
      log.info("service {} is gone: its names are no longer served", s.path());
    }
  }

  @Override
  public void listing(Instant failedSince, String problem) {
    zones.values().forEach(z -> z.directoryStale(failedSince != null));
  }

  /**
   * Waits up to {@code timeout} until every service in {@code services} has its first set in its zone; false if one
   * has not. A cache is ready when it holds its first set, but the zone has it only once the cache's listener has run
   * (a query just after the start once found no records for a service with three instances).
   */
  public boolean awaitPublished(Set<ServiceDirectory.Service> services, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (this) {
      while (!published.containsAll(services)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(this, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }
    return true;
  }
}
