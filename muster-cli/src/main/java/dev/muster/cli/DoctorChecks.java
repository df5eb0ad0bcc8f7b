package dev.muster.cli;

import dev.muster.Durations;
import dev.muster.MusterException;
import dev.muster.etcd.EtcdMaintenance.Alarm;
import dev.muster.etcd.EtcdMaintenance.LeaseTtl;
import dev.muster.etcd.EtcdMaintenance.MemberStatus;
import dev.muster.etcd.EtcdMaintenance.StoredKey;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistryLayout;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * {@code muster doctor}'s rules, without I/O: facts in (member statuses, alarms, catch-up times, the keys under
 * the root with their leases), findings out. Thresholds come from seed 001 (a member more than 10 s behind is an
 * error) and etcd's own limits (at the backend quota etcd raises NOSPACE and refuses every write). Stateless.
 */
final class DoctorChecks {
  /** Of the quota: above this, a warning; above {@link #DB_ERROR}, an error. */
  static final double DB_WARNING = 0.80;
  static final double DB_ERROR = 0.95;

  private DoctorChecks() {}

  /** How far behind a member's applied index was: caught up after {@code after}, or not within the limit (null). */
  record Lag(URI endpoint, long target, long applied, Duration after) {}

  /** What the layout holds: instances by state per {@code namespace/service}, and the versions seen. */
  record ServiceCount(String service, Map<InstanceState, Integer> states, SortedSet<String> versions) {
    int total() {
      return states.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  record LayoutReport(List<ServiceCount> services, int keys, int leases, List<DoctorFinding> findings) {}

  static List<DoctorFinding> cluster(List<MemberStatus> status, Function<URI, String> name, List<Alarm> alarms,
      Function<String, String> nameById, long quota) {
    List<DoctorFinding> out = new ArrayList<>();
    TreeSet<String> leaders = new TreeSet<>();
    TreeSet<String> versions = new TreeSet<>();
    for (MemberStatus s : status) {
      String member = name.apply(s.endpoint());
      if (s.refused()) {
        out.add(DoctorFinding.warning("member " + member + "'s status could not be read: " + s.failure(),
            "run doctor as etcd's root user, or as a user with etcd's root role (etcdctl user grant-role USER root):"
                + " etcd 3.5.28 to 3.5.31 answer a member's status only to root, earlier and later ones to any user"));
        continue;
      }
      if (!s.answered()) {
        out.add(DoctorFinding.error("member " + member + " does not answer (" + s.failure() + ")",
            "check that its process runs and is not stopped or frozen, and read its log; until it is back the"
                + " cluster tolerates one member fewer"));
        continue;
      }
      if (!s.leaderId().isEmpty() && !s.leaderId().equals("0")) {
        leaders.add(s.leaderId());
      }
      versions.add(s.version());
      for (String e : s.errors()) {
        out.add(DoctorFinding.error("member " + member + " reports: " + e, "read its log; etcd's own error"));
      }
      double used = (double) s.dbSize() / quota;
      if (used > DB_WARNING) {
        String what = "member " + member + "'s database is " + SizeConverter.show(s.dbSize()) + ", "
            + Math.round(used * 100) + " % of the " + SizeConverter.show(quota) + " quota";
        String todo = "compact and defragment (etcdctl compact REVISION; etcdctl defrag), or raise"
            + " --quota-backend-bytes and pass it as --quota: at the quota etcd raises NOSPACE and refuses every"
            + " registration";
        out.add(used > DB_ERROR ? DoctorFinding.error(what, todo) : DoctorFinding.warning(what, todo));
      }
    }
    boolean anyAnswered = status.stream().anyMatch(MemberStatus::answered);
    if (anyAnswered && leaders.isEmpty()) {
      out.add(DoctorFinding.error("no member has a leader", "the cluster has lost its quorum: bring members back"
          + " until a majority runs; until then no registration, lease renewal or deletion succeeds"));
    } else if (leaders.size() > 1) {
      out.add(DoctorFinding.error("members disagree on the leader (" + String.join(", ", leaders.stream()
          .map(nameById).toList()) + ")", "check the network between the members (a partition); run doctor again"
              + " in a few seconds, an election may have been under way"));
    }
    if (versions.size() > 1) {
      out.add(DoctorFinding.warning("members run different etcd versions (" + String.join(", ", versions) + ")",
          "finish the rolling upgrade: mixed versions are meant to be temporary"));
    }
    for (Alarm a : alarms) {
      out.add(DoctorFinding.error("alarm " + a.type() + " raised on member " + nameById.apply(a.memberId()),
          a.type().equals("NOSPACE") ? "etcd refuses writes: compact, defragment, then etcdctl alarm disarm"
              : "the member's data may be corrupt: replace the member from a healthy one, then etcdctl alarm disarm"));
    }
    return out;
  }

  static List<DoctorFinding> lag(List<Lag> lags, Function<URI, String> name, Duration warning, Duration error) {
    List<DoctorFinding> out = new ArrayList<>();
    for (Lag l : lags) {
      String member = name.apply(l.endpoint());
      if (l.after() == null) {
        out.add(DoctorFinding.error("member " + member + " lags more than " + Durations.format(error)
            + " behind the leader (applied index " + l.applied() + ", leader committed " + l.target() + ")",
            "it serves stale reads and watches: check its disk (fsync latency), CPU and network to the leader"));
      } else if (l.after().compareTo(warning) > 0) {
        out.add(DoctorFinding.warning("member " + member + " took " + Durations.format(l.after())
            + " to apply what the leader had committed", "watch it: more than " + Durations.format(error)
                + " is an error; check its disk and load"));
      }
    }
    return out;
  }

  /**
   * The layout under {@code layout}'s root: each key parsed and decoded, each lease's remaining TTL compared with
   * its grant (Muster renews at a third of the TTL, so less than a third left means two renewals were missed).
   */
  static LayoutReport layout(RegistryLayout layout, List<StoredKey> keys, Map<Long, Optional<LeaseTtl>> leases) {
    List<DoctorFinding> out = new ArrayList<>();
    SortedMap<String, Map<InstanceState, Integer>> states = new TreeMap<>();
    SortedMap<String, SortedSet<String>> versions = new TreeMap<>();
    SortedMap<String, SortedSet<String>> versionsById = new TreeMap<>();
    for (StoredKey k : keys) {
      InstanceKey key;
      try {
        key = layout.parseKey(k.key());
      } catch (MusterException e) {
        out.add(DoctorFinding.warning(k.key() + " is not an instance key (" + e.getMessage() + ")",
            "delete it: every key under " + layout.rootPrefix() + " should be " + layout.rootPrefix()
                + "NAMESPACE/SERVICE/VERSION/ID"));
        continue;
      }
      String service = key.namespace() + "/" + key.service();
      try {
        Instance i = InstanceCodec.decode(key, k.value());
        states.computeIfAbsent(service, s -> new EnumMap<>(InstanceState.class)).merge(i.state(), 1, Integer::sum);
        versions.computeIfAbsent(service, s -> new TreeSet<>()).add(key.version());
        versionsById.computeIfAbsent(service + "/" + key.id(), s -> new TreeSet<>()).add(key.version());
      } catch (MusterException e) {
        out.add(DoctorFinding.warning(k.key() + " has a malformed value (" + e.getMessage() + ")",
            "consumers skip it: fix the provider that writes it, or delete the key"));
      }
      if (k.lease() == 0) {
        out.add(DoctorFinding.warning(k.key() + " has no lease: it never expires",
            "delete it (etcdctl del " + k.key() + ") or re-register through Muster: a key without a lease outlives"
                + " its provider"));
      } else {
        leases.getOrDefault(k.lease(), Optional.empty()).ifPresent(l -> {
          if (l.left().multipliedBy(3).compareTo(l.granted()) < 0) {
            out.add(DoctorFinding.warning(k.key() + "'s lease " + Long.toHexString(l.id()) + " has "
                + Durations.format(l.left()) + " of " + Durations.format(l.granted()) + " left",
                "its provider's keepalive is late (Muster renews at a third of the TTL): a frozen, overloaded or cut"
                    + " off provider, removed when the lease runs out"));
          }
        });
      }
    }
    versionsById.forEach((id, vs) -> {
      if (vs.size() > 1) {
        out.add(DoctorFinding.warning("instance id " + id + " is registered under " + vs.size() + " versions ("
            + String.join(", ", vs) + ")", "give each instance its own id: DNS-SD has to serve them as ID-VERSION,"
                + " and metrics and logs keyed by id mix them up"));
      }
    });
    List<ServiceCount> services = new ArrayList<>();
    states.forEach((s, byState) -> services.add(new ServiceCount(s, byState, versions.get(s))));
    int distinctLeases = (int) keys.stream().mapToLong(StoredKey::lease).filter(l -> l != 0).distinct().count();
    return new LayoutReport(services, keys.size(), distinctLeases, out);
  }
}
