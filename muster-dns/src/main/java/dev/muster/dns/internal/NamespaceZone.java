package dev.muster.dns.internal;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.xbill.DNS.DClass;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.PTRRecord;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;

/**
 * One served zone, {@code <namespace>.<domain>}: the records of each of its services and the zone's own (browse
 * PTRs, SOA, NS).
 *
 * <p>Threading: writers are the services' cache notifiers and the directory thread; they serialize on this
 * object's monitor, copy the service map (O(services), never O(instances)), and publish an immutable
 * {@link View} through one volatile field. Readers (the UDP and TCP threads) read that field once per query and
 * take no lock.
 */
public final class NamespaceZone {
  /** What a query reads: immutable. */
  record View(Map<String, ServiceRecords> services, List<Record> browse, SOARecord soa, NSRecord ns,
      Instant directoryStaleSince, boolean anyStale) {}

  /** A service's feed: closed once the service left the zone, after which its late updates are ignored. */
  public static final class Feed {
    private final String service;
    private boolean closed; // guarded by the zone's monitor

    public Feed(String service) {
      this.service = service;
    }

    public String service() {
      return service;
    }
  }

  private final String namespace;
  private final Name origin;
  private final Name domain;
  private final long ttl;
  private final long staleTtl;
  private final Clock clock;
  private volatile View view;
  // guarded by this
  private final Map<String, ServiceRecords> services = new TreeMap<>();
  private Instant directoryStaleSince;

  public NamespaceZone(String namespace, Name domain, long ttlSeconds, long staleTtlSeconds, Clock clock) {
    this.namespace = namespace;
    this.domain = domain;
    this.origin = ServiceRecords.name(namespace, domain);
    this.ttl = ttlSeconds;
    this.staleTtl = staleTtlSeconds;
    this.clock = clock;
    synchronized (this) {
      publish();
    }
  }

  public String namespace() {
    return namespace;
  }

  public Name origin() {
    return origin;
  }

  View view() {
    return view;
  }

  /** The service's new records, unless its feed was closed meanwhile. */
  public synchronized void put(Feed feed, ServiceRecords records) {
    if (!feed.closed) {
      services.put(feed.service, records);
      publish();
    }
  }

  /** The service left the namespace: its records go, and later updates of {@code feed} are ignored. */
  public synchronized void remove(Feed feed) {
    feed.closed = true;
    if (services.remove(feed.service) != null) {
      publish();
    }
  }

  /** Whether the last read of the namespace's services failed (the browse list may be out of date). */
  public synchronized void directoryStale(boolean stale) {
    Instant next = stale ? (directoryStaleSince == null ? clock.instant() : directoryStaleSince) : null;
    if (next != directoryStaleSince) {
      directoryStaleSince = next;
      publish();
    }
  }

  /** The services served now (for tests and the status record). */
  public List<String> serviceNames() {
    return List.copyOf(view.services().keySet());
  }

  private void publish() {
    boolean stale = directoryStaleSince != null || services.values().stream().anyMatch(s -> s.staleSince != null);
    long recordTtl = directoryStaleSince == null ? ttl : staleTtl;
    Name browseName = ServiceRecords.name("_services._dns-sd._udp", origin);
    List<Record> browse = new ArrayList<>(services.size());
    long serial = 0;
    for (ServiceRecords s : services.values()) {
      browse.add(new PTRRecord(browseName, DClass.IN, recordTtl, s.ptrName));
      serial = Math.max(serial, s.revision);
    }
    long negative = stale ? staleTtl : ttl;
    // serial: the highest revision served (RFC 1982 arithmetic wraps at 2^32; etcd's revisions rarely get there)
    SOARecord soa = new SOARecord(origin, DClass.IN, negative, domain, ServiceRecords.name("hostmaster", origin),
        serial & 0xffff_ffffL, 3600, 600, 86_400, negative);
    NSRecord ns = new NSRecord(origin, DClass.IN, ttl, domain);
    view = new View(Map.copyOf(services), List.copyOf(browse), soa, ns, directoryStaleSince, stale);
  }
}
