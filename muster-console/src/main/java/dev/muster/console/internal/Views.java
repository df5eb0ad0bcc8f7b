package dev.muster.console.internal;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.registry.Instance;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The JSON each page renders, built from immutable inputs: the overview (namespaces, services, counts by state
 * and version), one service's instances (with TTL left, and the lease id when asked for), the cluster, the events and the stale
 * banner. Values are copied as they are; escaping is the page's job, which inserts them as text only.
 *
 * <p>Stateless and thread-safe (the pump thread calls it).
 */
final class Views {
  static final JsonMapper JSON = JsonMapper.builder().build();

  private Views() {}

  /** One service's counts, for the overview. */
  record ServiceSummary(String namespace, String service, EndpointSet set, boolean stale) {}

  /** The banner: stale since the oldest of the caches' and the listing's staleness, or fresh (null). */
  static ObjectNode banner(Instant staleSince, String reason, Instant now) {
    ObjectNode b = JSON.createObjectNode();
    b.put("stale", staleSince != null);
    if (staleSince != null) {
      b.put("staleSeconds", Math.max(0, Duration.between(staleSince, now).toSeconds()));
      b.put("reason", reason == null ? "" : reason);
    }
    return b;
  }

  static ObjectNode overview(List<String> namespaces, List<ServiceSummary> services) {
    ObjectNode root = JSON.createObjectNode();
    ArrayNode nss = root.putArray("namespaces");
    Map<String, ArrayNode> byNs = new TreeMap<>();
    for (String ns : namespaces) {
      ObjectNode n = nss.addObject();
      n.put("name", ns);
      byNs.put(ns, n.putArray("services"));
    }
    for (ServiceSummary s : services) {
      ArrayNode list = byNs.get(s.namespace());
      if (list == null) {
        continue; // listed before its namespace: the next pass shows it
      }
      ObjectNode o = list.addObject();
      o.put("name", s.service());
      o.put("instances", s.set().size());
      o.put("revision", s.set().revision());
      o.put("stale", s.stale());
      Map<String, Integer> states = new TreeMap<>();
      Map<String, Integer> versions = new TreeMap<>();
      for (Instance i : s.set().instances()) {
        states.merge(i.state().name(), 1, Integer::sum);
        versions.merge(i.version(), 1, Integer::sum);
      }
      ObjectNode st = o.putObject("byState");
      states.forEach(st::put);
      ObjectNode vs = o.putObject("byVersion");
      versions.forEach(vs::put);
    }
    return root;
  }

  /**
   * One service's instances; a lease's TTL left is what was read minus the time since, never below 0. The lease id
   * only when {@code showLeases}: with it, anyone who may write to etcd can revoke the instance's registration.
   */
  static ObjectNode service(String namespace, String service, EndpointSet set, boolean known,
      EtcdReader.ServiceLeases leases, boolean showLeases, Instant now) {
    ObjectNode root = JSON.createObjectNode();
    root.put("namespace", namespace);
    root.put("service", service);
    root.put("known", known);
    root.put("revision", set.revision());
    if (leases != null && leases.problem() != null) {
      root.put("leaseProblem", leases.problem());
    }
    ArrayNode list = root.putArray("instances");
    for (Instance i : set.instances()) {
      ObjectNode o = list.addObject();
      o.put("id", i.id());
      o.put("version", i.version());
      o.put("address", i.address() + ":" + i.port());
      o.put("state", i.state().name());
      o.put("zone", i.zone() == null ? "" : i.zone());
      o.put("weight", i.weight());
      i.tags().forEach(o.putArray("tags")::add);
      ObjectNode meta = o.putObject("metadata");
      i.metadata().forEach(meta::put);
      o.put("registeredAt", i.registeredAt() == null ? "" : i.registeredAt().toString());
      EtcdReader.LeaseInfo lease = leases == null ? null : leases.byInstance().get(i.key().path());
      if (lease != null) {
        if (showLeases) {
          o.put("lease", lease.id() == 0 ? "none" : Long.toHexString(lease.id()));
        }
        long left = lease.left().minus(Duration.between(lease.readAt(), now)).toSeconds();
        o.put("ttlLeft", Math.max(0, left));
        o.put("ttlGranted", lease.granted().toSeconds());
      }
    }
    return root;
  }

  static ObjectNode cluster(EtcdReader.Cluster c, long quota) {
    ObjectNode root = JSON.createObjectNode();
    root.put("quota", quota);
    if (c == null) {
      root.put("loading", true);
      return root;
    }
    root.put("revision", c.revision());
    root.put("readAt", c.readAt().toString());
    if (c.problem() != null) {
      root.put("problem", c.problem());
    }
    String leader = "";
    ArrayNode members = root.putArray("members");
    for (EtcdMaintenance.MemberStatus s : c.status()) {
      ObjectNode o = members.addObject();
      o.put("endpoint", s.endpoint().toString());
      o.put("answered", s.answered());
      if (!s.answered()) {
        o.put("failure", s.failure());
        continue;
      }
      if (!s.leaderId().isEmpty() && !"0".equals(s.leaderId())) {
        leader = s.leaderId();
      }
      o.put("id", s.memberId());
      o.put("name", nameOf(c.members(), s.memberId()));
      o.put("version", s.version());
      o.put("leader", s.isLeader());
      o.put("dbSize", s.dbSize());
      o.put("dbSizeInUse", s.dbSizeInUse());
      o.put("dbPercent", Math.round(1000.0 * s.dbSize() / quota) / 10.0);
      o.put("raftTerm", s.raftTerm());
      o.put("raftIndex", s.raftIndex());
      o.put("learner", s.learner());
      s.errors().forEach(o.putArray("errors")::add);
    }
    root.put("leader", leader.isEmpty() ? "" : leader + nameSuffix(c.members(), leader));
    ArrayNode alarms = root.putArray("alarms");
    for (EtcdMaintenance.Alarm a : c.alarms()) {
      ObjectNode o = alarms.addObject();
      o.put("member", a.memberId());
      o.put("type", a.type());
    }
    return root;
  }

  static ArrayNode events(List<ConsoleEvent> events) {
    ArrayNode out = JSON.createArrayNode();
    for (ConsoleEvent e : events) {
      ObjectNode o = out.addObject();
      o.put("seq", e.seq());
      o.put("at", e.at().toString());
      o.put("type", e.type());
      o.put("namespace", e.namespace());
      o.put("service", e.service());
      o.put("version", e.version());
      o.put("id", e.id());
      o.put("detail", e.detail());
    }
    return out;
  }

  private static String nameOf(List<EtcdMaintenance.Member> members, String id) {
    return members.stream().filter(m -> m.id().equals(id)).map(EtcdMaintenance.Member::name).findFirst().orElse("");
  }

  private static String nameSuffix(List<EtcdMaintenance.Member> members, String id) {
    String name = nameOf(members, id);
    return name.isEmpty() ? "" : " (" + name + ")";
  }
}
