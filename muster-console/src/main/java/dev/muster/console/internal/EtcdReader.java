package dev.muster.console.internal;

import dev.muster.MusterException;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistryLayout;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What no cache holds, read from etcd server-side and only while a page shows it: the leases (id, TTL left) of a
 * viewed service's instances, at most every {@code leaseRefresh}, and the cluster's member status, member list and
 * alarms, at most every {@code clusterRefresh}.
 *
 * <p>Threading: {@link #refresh()} runs on the console's one etcd thread, which alone calls etcd (blocking, no lock
 * held). The pump thread says what is viewed ({@link #viewing}) and reads the results; both are immutable values
 * published through volatile fields or a concurrent map.
 */
final class EtcdReader {
  /** A lease as read at {@code readAt}: what is left now is {@code left} minus the time since. */
  record LeaseInfo(long id, Duration granted, Duration left, Instant readAt) {}

  /** A service's instance leases by {@link InstanceKey#path()}; {@code problem} when the last read failed. */
  record ServiceLeases(Map<String, LeaseInfo> byInstance, Instant readAt, String problem) {}

  /** The cluster as last read; {@code problem} when a call failed (the other parts may still be there). */
  record Cluster(List<EtcdMaintenance.MemberStatus> status, List<EtcdMaintenance.Member> members,
      List<EtcdMaintenance.Alarm> alarms, long revision, Instant readAt, String problem) {}

  private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(2);

  private final EtcdMaintenance etcd;
  private final RegistryLayout layout;
  private final Duration leaseRefresh;
  private final Duration clusterRefresh;
  private final Clock clock;
  private final Map<String, ServiceLeases> leases = new ConcurrentHashMap<>();
  private volatile Set<String> viewedServices = Set.of();
  private volatile boolean clusterViewed;
  private volatile Cluster cluster;

  EtcdReader(EtcdMaintenance etcd, RegistryLayout layout, Duration leaseRefresh, Duration clusterRefresh,
      Clock clock) {
    this.etcd = etcd;
    this.layout = layout;
    this.leaseRefresh = leaseRefresh;
    this.clusterRefresh = clusterRefresh;
    this.clock = clock;
  }

  /** From the pump: the services ({@code namespace/service}) and whether the cluster page are viewed now. */
  void viewing(Set<String> services, boolean cluster) {
    viewedServices = Set.copyOf(services);
    clusterViewed = cluster;
    leases.keySet().retainAll(viewedServices);
  }

  Optional<ServiceLeases> leases(String namespace, String service) {
    return Optional.ofNullable(leases.get(namespace + "/" + service));
  }

  Optional<Cluster> cluster() {
    return Optional.ofNullable(cluster);
  }

  /** One pass on the etcd thread: reads what is viewed and due. Never throws. */
  void refresh() {
    Instant now = clock.instant();
    for (String path : viewedServices) {
      ServiceLeases last = leases.get(path);
      if (last == null || !now.isBefore(last.readAt().plus(leaseRefresh))) {
        String[] parts = path.split("/", 2);
        leases.put(path, readLeases(parts[0], parts[1], last));
      }
    }
    Cluster c = cluster;
    if (clusterViewed && (c == null || !now.isBefore(c.readAt().plus(clusterRefresh)))) {
      cluster = readCluster(c);
    }
  }

  private ServiceLeases readLeases(String namespace, String service, ServiceLeases last) {
    try {
      Map<Long, Optional<EtcdMaintenance.LeaseTtl>> ttls = new HashMap<>();
      Map<String, LeaseInfo> out = new HashMap<>();
      for (EtcdMaintenance.StoredKey k : etcd.keys(layout.servicePrefix(namespace, service)).keys()) {
        InstanceKey key;
        try {
          key = layout.parseKey(k.key());
        } catch (MusterException e) {
          continue; // not an instance key: the cache ignores it too
        }
        if (k.lease() == 0) {
          out.put(key.path(), new LeaseInfo(0, Duration.ZERO, Duration.ZERO, clock.instant()));
          continue;
        }
        Optional<EtcdMaintenance.LeaseTtl> ttl = ttls.computeIfAbsent(k.lease(), etcd::lease);
        Instant at = clock.instant();
        ttl.ifPresent(t -> out.put(key.path(), new LeaseInfo(t.id(), t.granted(), t.left(), at)));
      }
      return new ServiceLeases(Map.copyOf(out), clock.instant(), null);
    } catch (MusterException e) {
      return new ServiceLeases(last == null ? Map.of() : last.byInstance(), clock.instant(), e.getMessage());
    }
  }

  private Cluster readCluster(Cluster last) {
    List<EtcdMaintenance.MemberStatus> status = etcd.status(STATUS_TIMEOUT);
    try {
      long revision = etcd.keys(layout.rootPrefix() + "\u0000").revision(); // an empty range: just the header
      return new Cluster(status, etcd.members(), etcd.alarms(), revision, clock.instant(), null);
    } catch (MusterException e) {
      return new Cluster(status, last == null ? List.of() : last.members(), last == null ? List.of() : last.alarms(),
          last == null ? 0 : last.revision(), clock.instant(), e.getMessage());
    }
  }
}
