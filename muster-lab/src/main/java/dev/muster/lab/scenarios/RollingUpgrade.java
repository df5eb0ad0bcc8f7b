package dev.muster.lab.scenarios;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.lab.EtcdTruth;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.LabException;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.EtcdVersion;
import dev.muster.testing.JsonLog;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The operation every etcd owner has to make, under load: a 3-member cluster on the older line (3.4.23,
 * {@link EtcdBinary#locateOld()}) is upgraded one member at a time to the lab's etcd ({@link EtcdBinary#locate()},
 * 3.5): SIGTERM, the same data directory on the new binary, wait until the whole cluster is healthy. Then every
 * member is restarted once more, one at a time, on the new line (the rolling restart every later change needs).
 * Three providers, consumers A and B and the watcher, all given the three endpoints, run throughout.
 *
 * <p>After every step each cache must come back fresh and list exactly what etcd lists. Measured: A's and B's
 * failed calls, leases lost and re-registrations (must be 0: a member's restart is not the registry's outage),
 * resyncs and stale periods per cache, each member's time from its restart to the cluster's health, the leader
 * changes (and the raft term), and the cluster version before and after.
 */
public final class RollingUpgrade implements Scenario {
  private static final String SERVICE = "hello";
  private static final Duration HEALTHY = Duration.ofSeconds(60);

  @Override
  public String name() {
    return "rolling_upgrade";
  }

  @Override
  public String shows() {
    return "3 members on 3.4.23 upgraded to 3.5 one at a time, then restarted one at a time, while A and B call:"
        + " no failed call, no lease lost, every cache equal to etcd after every step";
  }

  @Override
  public String seed() {
    return "beyond the seeds: the rolling upgrade every etcd owner makes (issue 32)";
  }

  /** One member's stop and start, and what every cache held afterwards. */
  private record Step(String label, String member, long stopMs, long healthyMs, String leaderBefore,
      String leaderAfter, String runs, List<String> unequal) {}

  @Override
  public ScenarioResult run(LabContext ctx) {
    Path from = EtcdBinary.locateOld().orElseThrow(() -> new LabException("rolling_upgrade starts on the older etcd"
        + " line (3.4.23): run './muster etcd-install 3.4', or set " + EtcdBinary.OLD_ENV + " to its binary"));
    Path to = EtcdBinary.locate();
    String fromVersion = version(from);
    String toVersion = version(to);
    EtcdCluster etcd = ctx.etcd(EtcdCluster.builder().members(3).binary(from));
    String all = etcd.endpointsString();
    String clusterBefore = clusterVersion(etcd);
    Fleet f = Fleet.providers(ctx, SERVICE, all, 3).consumers(ctx, all, true, true, true);
    List<ChildProcess> caches = List.of(f.a, f.b, f.watcher);
    ctx.sleep(Duration.ofSeconds(1));

    Instant start = Instant.now();
    long termBefore = term(all);
    List<Step> steps = new ArrayList<>();
    for (EtcdMember m : etcd.members()) {
      steps.add(step(ctx, etcd, f, caches, m, to, "upgrade " + fromVersion + " -> " + toVersion));
    }
    // etcd raises the cluster version by itself once every member runs the new line, a few seconds later
    String line = toVersion.substring(0, toVersion.lastIndexOf('.'));
    ctx.await("the cluster version to reach " + line, Duration.ofSeconds(30),
        () -> clusterVersion(etcd).startsWith(line));
    String clusterAfterUpgrade = clusterVersion(etcd);
    for (EtcdMember m : etcd.members()) {
      steps.add(step(ctx, etcd, f, caches, m, to, "restart on " + toVersion));
    }
    ctx.sleep(Duration.ofSeconds(1));
    Instant end = Instant.now();
    long termAfter = term(all);

    List<com.fasterxml.jackson.databind.JsonNode> aCalls = Fleet.calls(f.a, start, end);
    List<com.fasterxml.jackson.databind.JsonNode> bCalls = Fleet.calls(f.b, start, end);
    long aFailed = Fleet.failed(aCalls);
    long bFailed = Fleet.failed(bCalls);
    long leasesLost = f.providers.stream().mapToLong(p -> events(p, "lease_lost", start)).sum();
    long reregistered = f.providers.stream().mapToLong(p -> events(p, "reregistered", start)).sum();
    long unreachable = f.providers.stream().mapToLong(p -> events(p, "unreachable", start)).sum();
    String resyncs = caches.stream().map(c -> c.name() + " " + events(c, "resync", start))
        .collect(Collectors.joining(", "));
    String stale = caches.stream().map(c -> c.name() + " " + events(c, "stale", start))
        .collect(Collectors.joining(", "));
    long leaderChanges = steps.stream().filter(s -> !s.leaderBefore().equals(s.leaderAfter())).count();
    List<String> unequal = steps.stream().filter(s -> !s.unequal().isEmpty())
        .map(s -> s.label() + " " + s.member() + ": " + s.unequal()).toList();
    boolean allOnTarget = steps.stream().skip(steps.size() - 3L).allMatch(s -> s.runs().equals(toVersion));

    String perStep = steps.stream().map(s -> s.member() + " " + s.stopMs() + "/" + s.healthyMs()
            + (s.leaderBefore().equals(s.member()) ? " (leader)" : ""))
        .collect(Collectors.joining(", "));
    String figures = String.format("%s -> %s, each member SIGTERMed and restarted on the same data; SIGTERM to exit /"
            + " restart to the cluster healthy, ms (upgrade, then restart): %s; cluster version %s -> %s -> %s;"
            + " leader changed in %d of %d steps (raft term %d -> %d); A %d failed of %d calls, B %d"
            + " failed of %d; providers: %d lease(s) lost, %d re-registration(s), %d keepalive failure(s) retried;"
            + " resyncs %s; stale periods %s; %s",
        fromVersion, toVersion, perStep,
        clusterBefore, clusterAfterUpgrade, clusterVersion(etcd), leaderChanges, steps.size(), termBefore,
        termAfter, aFailed, aCalls.size(), bFailed, bCalls.size(), leasesLost, reregistered, unreachable, resyncs,
        stale, unequal.isEmpty() ? "every cache equal to etcd after all " + steps.size() + " steps"
            : "NOT equal to etcd after " + unequal);
    if (fromVersion.equals(toVersion)) {
      figures += " (the lab's etcd is the old line itself: a rolling restart, no upgrade)";
    }
    boolean pass = aFailed == 0 && leasesLost == 0 && reregistered == 0 && unequal.isEmpty() && allOnTarget
        && !aCalls.isEmpty();
    return ScenarioResult.of(this, pass, figures, "A failures = 0; leases lost = 0; re-registrations = 0; after every"
        + " step every cache fresh and equal to etcd; every member on the new version at the end");
  }

  private static Step step(LabContext ctx, EtcdCluster etcd, Fleet f, List<ChildProcess> caches, EtcdMember m,
      Path binary, String label) {
    String leaderBefore = etcd.leader().map(EtcdMember::name).orElse("none");
    Instant t0 = Instant.now();
    ctx.mark("sigterm", label + ": " + m.name());
    m.stop();
    Instant stopped = Instant.now();
    m.restart(binary, HEALTHY);
    etcd.awaitHealthy(HEALTHY);
    Instant healthy = Instant.now();
    ctx.mark("healthy", label + ": " + m.name() + " back, the cluster healthy");
    for (ChildProcess c : caches) {
      ctx.await(c.name() + " fresh after " + m.name() + "'s restart", Duration.ofSeconds(30),
          () -> events(c, "stale", t0) == events(c, "recovered", t0));
    }
    ctx.sleep(Duration.ofSeconds(1));
    List<String> truth = EtcdTruth.ids(etcd.endpointsString(), SERVICE);
    List<String> unequal = new ArrayList<>();
    for (ChildProcess c : caches) {
      List<String> seen = List.copyOf(new TreeSet<>(Fleet.lastSet(c)));
      if (!seen.equals(truth) || truth.size() != f.providers.size()) {
        unequal.add(c.name() + " " + seen + " vs etcd " + truth);
      }
    }
    String runs = m.versions().map(EtcdMember.Versions::server).orElse("?");
    String leaderAfter = etcd.leader().map(EtcdMember::name).orElse("none");
    ctx.note(label + ": " + m.name() + " exited " + Fleet.millis(t0, stopped) + " ms after its SIGTERM, the cluster"
        + " healthy " + Fleet.millis(stopped, healthy) + " ms after its restart, runs "
        + runs + ", leader " + leaderBefore + " -> " + leaderAfter + (unequal.isEmpty() ? "" : ", UNEQUAL " + unequal));
    return new Step(label, m.name(), Fleet.millis(t0, stopped), Fleet.millis(stopped, healthy), leaderBefore,
        leaderAfter, runs, unequal);
  }

  private static String version(Path binary) {
    return EtcdBinary.version(binary).map(EtcdVersion::toString).orElseThrow(() -> new LabException(binary
        + " --version did not say which etcd it is: point " + EtcdBinary.ENV + " / " + EtcdBinary.OLD_ENV
        + " at etcd server binaries"));
  }

  private static String clusterVersion(EtcdCluster etcd) {
    return etcd.members().stream().map(EtcdMember::versions).flatMap(Optional::stream)
        .map(EtcdMember.Versions::cluster).findFirst().orElse("?");
  }

  /** The highest raft term any member reports: each election raises it by one. */
  private static long term(String endpoints) {
    try (EtcdMaintenance m = EtcdMaintenance.connect(EtcdConfig.of(endpoints))) {
      return m.status(Duration.ofSeconds(3)).stream().filter(EtcdMaintenance.MemberStatus::answered)
          .mapToLong(EtcdMaintenance.MemberStatus::raftTerm).max().orElse(0);
    }
  }

  private static long events(ChildProcess p, String event, Instant after) {
    return p.json().events(event).stream().filter(n -> !JsonLog.ts(n).isBefore(after)).count();
  }

}
