package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.Durations;
import dev.muster.MusterException;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdMaintenance.LeaseTtl;
import dev.muster.etcd.EtcdMaintenance.Member;
import dev.muster.etcd.EtcdMaintenance.MemberStatus;
import dev.muster.registry.InstanceState;
import dev.muster.registry.Names;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster doctor}: one read-only pass over the cluster (every member's status, leader, raft term and index,
 * how long each member takes to apply what the leader committed, database size against the quota, alarms,
 * versions) and over Muster's layout (services and instances, malformed keys and values, keys without a lease,
 * leases close to expiry, ids under two versions). One line per finding, errors first; exit 0 (nothing found),
 * 1 (warnings), 2 (errors). The rules are {@link DoctorChecks}; this class gathers the facts.
 */
@Command(name = "doctor", description = {
    "Check the etcd cluster and Muster's keys: per member health, leader, raft term and index, applied-index lag,"
        + " DB size against the quota, alarms, versions; services, instances, malformed values, keys without a"
        + " lease, leases close to expiry, duplicate ids.",
    "One line per finding (SEVERITY  WHAT — what to do); exit 0 when all is well, 1 for warnings, 2 for errors."})
final class DoctorCommand implements Callable<Integer> {
  private static final Duration POLL = Duration.ofMillis(200);

  @Spec
  CommandSpec spec;

  @Mixin
  EtcdOptions etcd;

  @Option(names = "--timeout", paramLabel = "D", defaultValue = "3s", converter = DurationConverter.class,
      description = "How long each member may take to answer a status call; a member that does not is an error"
          + " (default ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(names = "--lag-error", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "A member that takes longer than this to apply what the leader had committed is an error"
          + " (seed 001's threshold; default ${DEFAULT-VALUE}). Doctor waits at most this long.")
  Duration lagError;

  @Option(names = "--lag-warning", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "... and longer than this a warning (default ${DEFAULT-VALUE}).")
  Duration lagWarning;

  @Option(names = "--quota", paramLabel = "SIZE", defaultValue = "2GiB", converter = SizeConverter.class,
      description = "The members' --quota-backend-bytes (etcd 3.4 does not report it): over 80 %% of it is a"
          + " warning, over 95 %% an error (default ${DEFAULT-VALUE}, etcd's own default).")
  long quota;

  @Option(names = "--namespace", paramLabel = "NS",
      description = "Check only this namespace's keys (default: everything under the layout's root).")
  String namespace;

  @Option(names = "--json", description = "One JSON object per line: \"event\":\"member\", \"service\","
      + " \"finding\" and a final \"summary\".")
  boolean json;

  @Override
  public Integer call() throws InterruptedException {
    if (lagWarning.compareTo(lagError) > 0) {
      throw new Errors.UsageException("--lag-warning " + Durations.format(lagWarning) + " is above --lag-error "
          + Durations.format(lagError) + ": make the warning threshold the smaller one");
    }
    if (namespace != null && !Names.isValid(namespace)) {
      throw new Errors.UsageException("--namespace '" + namespace + "' is not a valid name: use letters, digits,"
          + " '-', '_' and '.'");
    }
    EtcdConfig config = etcd.etcdConfig();
    List<DoctorFinding> findings = new ArrayList<>();
    try (EtcdMaintenance etcdMaintenance = EtcdMaintenance.connect(config)) {
      Facts facts = gather(etcdMaintenance, config, findings);
      findings.addAll(DoctorChecks.cluster(facts.status, facts::name, facts.alarms, facts::nameById, quota));
      findings.addAll(DoctorChecks.lag(lags(etcdMaintenance, facts), facts::name, lagWarning, lagError));
      DoctorChecks.LayoutReport layout = layout(etcdMaintenance, config, facts, findings);
      findings.sort(DoctorFinding.WORST_FIRST);
      print(facts, layout, findings);
    }
    return findings.isEmpty() ? 0 : findings.get(0).severity().exitCode;
  }

  /** What the cluster said: members, their statuses, alarms, and the revision of the layout's read. */
  private static final class Facts {
    final Map<URI, String> names = new HashMap<>();
    final Map<String, String> idNames = new HashMap<>();
    List<MemberStatus> status = List.of();
    List<EtcdMaintenance.Alarm> alarms = List.of();
    long revision;

    String name(URI endpoint) {
      String n = names.get(endpoint);
      return n == null ? endpoint.toString() : n + " (" + endpoint + ")";
    }

    String nameById(String id) {
      return idNames.getOrDefault(id, id);
    }
  }

  private Facts gather(EtcdMaintenance m, EtcdConfig config, List<DoctorFinding> findings) {
    Facts facts = new Facts();
    LinkedHashSet<URI> endpoints = new LinkedHashSet<>();
    try {
      for (Member member : m.members()) {
        facts.idNames.put(member.id(), member.name());
        member.clientUrls().forEach(u -> facts.names.put(u, member.name()));
        endpoints.addAll(member.clientUrls()); // every member, even those --endpoints does not name
      }
    } catch (MusterException e) {
      findings.add(DoctorFinding.error("the member list could not be read (" + e.getMessage() + ")",
          "only the --endpoints given are checked: check that a majority of the members runs"));
    }
    endpoints.addAll(config.endpoints());
    List<URI> byName = new ArrayList<>(endpoints);
    byName.sort(java.util.Comparator.comparing((URI u) -> facts.names.getOrDefault(u, "~" + u)));
    facts.status = m.status(byName, timeout);
    for (MemberStatus s : facts.status) {
      if (s.answered()) {
        facts.idNames.putIfAbsent(s.memberId(), s.memberId());
      }
    }
    if (facts.status.stream().anyMatch(MemberStatus::answered)) {
      try {
        facts.alarms = m.alarms();
      } catch (MusterException e) {
        findings.add(DoctorFinding.warning("alarms not checked (" + e.getMessage() + ")",
            "run doctor as an etcd user that may list alarms (root)"));
      }
    }
    return facts;
  }

  /**
   * Seed 001's lag in seconds: the leader's committed index now, then each member's applied index polled until it
   * reaches it, for at most {@code --lag-error}.
   */
  private List<DoctorChecks.Lag> lags(EtcdMaintenance m, Facts facts) throws InterruptedException {
    Optional<MemberStatus> leader = facts.status.stream().filter(MemberStatus::isLeader).findFirst();
    if (leader.isEmpty()) {
      return List.of();
    }
    long target = leader.get().raftIndex();
    long start = System.nanoTime();
    Map<URI, Long> pending = new HashMap<>();
    List<DoctorChecks.Lag> lags = new ArrayList<>();
    for (MemberStatus s : facts.status) {
      if (s.answered() && s.raftAppliedIndex() < target) {
        pending.put(s.endpoint(), s.raftAppliedIndex());
      }
    }
    while (!pending.isEmpty() && System.nanoTime() - start < lagError.toNanos()) {
      Thread.sleep(POLL.toMillis());
      for (MemberStatus s : m.status(List.copyOf(pending.keySet()), timeout)) {
        if (s.answered()) {
          pending.put(s.endpoint(), s.raftAppliedIndex());
          if (s.raftAppliedIndex() >= target) {
            pending.remove(s.endpoint());
            lags.add(new DoctorChecks.Lag(s.endpoint(), target, s.raftAppliedIndex(),
                Duration.ofNanos(System.nanoTime() - start)));
          }
        }
      }
    }
    pending.forEach((endpoint, applied) -> lags.add(new DoctorChecks.Lag(endpoint, target, applied, null)));
    return lags;
  }

  private DoctorChecks.LayoutReport layout(EtcdMaintenance m, EtcdConfig config, Facts facts,
      List<DoctorFinding> findings) {
    String prefix = namespace == null ? config.layout().rootPrefix() : config.layout().namespacePrefix(namespace);
    EtcdMaintenance.Keys keys;
    try {
      keys = m.keys(prefix);
    } catch (MusterException e) {
      findings.add(DoctorFinding.error("the layout under " + prefix + " could not be read (" + e.getMessage() + ")",
          "run doctor as a user with read on " + prefix + " (muster auth grant-admin USER, or root)"));
      return new DoctorChecks.LayoutReport(List.of(), 0, 0, List.of());
    }
    facts.revision = keys.revision();
    Map<Long, Optional<LeaseTtl>> leases = new HashMap<>();
    for (EtcdMaintenance.StoredKey k : keys.keys()) {
      if (k.lease() != 0 && !leases.containsKey(k.lease())) {
        try {
          leases.put(k.lease(), m.lease(k.lease()));
        } catch (MusterException e) {
          leases.put(k.lease(), Optional.empty()); // unreadable: not judged
        }
      }
    }
    DoctorChecks.LayoutReport report = DoctorChecks.layout(config.layout(), keys.keys(), leases);
    findings.addAll(report.findings());
    return report;
  }

  private void print(Facts facts, DoctorChecks.LayoutReport layout, List<DoctorFinding> findings) {
    PrintWriter out = spec.commandLine().getOut();
    Instant now = Instant.now();
    long errors = findings.stream().filter(f -> f.severity() == DoctorFinding.Severity.ERROR).count();
    long warnings = findings.size() - errors;
    if (json) {
      for (MemberStatus s : facts.status) {
        ObjectNode n = JsonLines.event("member", now).put("endpoint", s.endpoint().toString())
            .put("name", facts.names.getOrDefault(s.endpoint(), "")).put("answered", s.answered());
        if (s.answered()) {
          n.put("id", s.memberId()).put("leader", s.isLeader()).put("version", s.version())
              .put("dbSize", s.dbSize()).put("raftTerm", s.raftTerm()).put("raftIndex", s.raftIndex())
              .put("raftAppliedIndex", s.raftAppliedIndex());
        } else {
          n.put("failure", s.failure()).put("refused", s.refused());
        }
        JsonLines.print(out, n);
      }
      for (DoctorChecks.ServiceCount c : layout.services()) {
        ObjectNode n = JsonLines.event("service", now).put("service", c.service()).put("instances", c.total());
        c.states().forEach((state, count) -> n.put(state.name(), count));
        c.versions().forEach(n.putArray("versions")::add);
        JsonLines.print(out, n);
      }
      for (DoctorFinding f : findings) {
        JsonLines.print(out, JsonLines.event("finding", now).put("severity", f.severity().name())
            .put("what", f.what()).put("todo", f.todo()));
      }
      JsonLines.print(out, JsonLines.event("summary", now).put("errors", errors).put("warnings", warnings)
          .put("revision", facts.revision));
      return;
    }
    out.println("cluster: " + facts.status.size() + " member(s)" + (facts.revision > 0 ? ", revision "
        + facts.revision : ""));
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"MEMBER", "ENDPOINT", "STATUS", "VERSION", "DB", "TERM", "INDEX", "APPLIED"});
    for (MemberStatus s : facts.status) {
      String name = facts.names.getOrDefault(s.endpoint(), s.answered() ? s.memberId() : "?");
      rows.add(s.answered()
          ? new String[] {name, s.endpoint().toString(), s.isLeader() ? "leader" : "follower", s.version(),
              SizeConverter.show(s.dbSize()), Long.toString(s.raftTerm()), Long.toString(s.raftIndex()),
              Long.toString(s.raftAppliedIndex())}
          : new String[] {name, s.endpoint().toString(), s.refused() ? "REFUSED" : "NO ANSWER", "-", "-", "-", "-",
              "-"});
    }
    Tables.printAligned(out, rows);
    int instances = layout.services().stream().mapToInt(DoctorChecks.ServiceCount::total).sum();
    out.println("layout: " + layout.services().size() + " service(s), " + instances + " instance(s), "
        + layout.keys() + " key(s), " + layout.leases() + " lease(s)");
    if (!layout.services().isEmpty()) {
      List<String[]> services = new ArrayList<>();
      services.add(new String[] {"SERVICE", "UP", "STARTING", "DRAINING", "VERSIONS"});
      for (DoctorChecks.ServiceCount c : layout.services()) {
        services.add(new String[] {c.service(), count(c, InstanceState.UP), count(c, InstanceState.STARTING),
            count(c, InstanceState.DRAINING), String.join(",", c.versions())});
      }
      Tables.printAligned(out, services);
    }
    findings.forEach(out::println);
    out.println("doctor: " + (findings.isEmpty() ? "all well" : errors + " error(s), " + warnings + " warning(s)"));
    out.flush();
  }

  private static String count(DoctorChecks.ServiceCount c, InstanceState state) {
    return Integer.toString(c.states().getOrDefault(state, 0));
  }
}
