package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.lab.EtcdTruth;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The leader of a 3-member cluster is SIGKILLed while consumer A calls. Providers, A and the watcher are all given
 * the three endpoints. Measured: the time from the kill until a surviving member reports a new leader
 * ({@code awaitLeader}), A's failures from the kill until the cluster settled (must be 0), the watcher's stale and
 * resync lines, and whether the watcher's last set equals etcd's (an in-process {@code EtcdRegistry.list} against
 * the surviving members) once the watcher is no longer stale. Then the killed member is restarted and the same
 * comparison is made again with all three members up.
 */
public final class LeaderChange implements Scenario {
  @Override
  public String name() {
    return "leader_change";
  }

  @Override
  public String shows() {
    return "kill the leader of 3 members while A calls: new leader, A unaffected, watcher equal to etcd";
  }

  @Override
  public String seed() {
    return "beyond the seeds (unproven there): leader change in a 3-member cluster";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(3);
    String all = etcd.endpointsString();
    Fleet f = Fleet.providers(ctx, "hello", all, 3).consumers(ctx, all, true, false, true);
    ChildProcess w = f.watcher;
    ctx.sleep(Duration.ofSeconds(1));

    EtcdMember old = etcd.killLeader();
    Instant kill = Instant.now();
    EtcdMember leader = etcd.awaitLeader(Duration.ofSeconds(30));
    long electionMs = Fleet.millis(kill, Instant.now());
    // Settled: a new leader, the watcher not stale, and a few seconds of calls through the change.
    ctx.sleep(Duration.ofSeconds(3));
    ctx.await("the watcher to be fresh again", Duration.ofSeconds(30),
        () -> events(w, "stale", kill) == events(w, "recovered", kill));
    ctx.sleep(Duration.ofSeconds(1));
    String survivors = etcd.members().stream().filter(EtcdMember::isRunning).map(m -> m.clientUrl().toString())
        .collect(Collectors.joining(","));
    List<String> truthDown = EtcdTruth.ids(survivors, "hello");
    List<String> seenDown = sorted(Fleet.lastSet(w));
    Instant settled = Instant.now();
    List<JsonNode> calls = Fleet.calls(f.a, kill, settled);
    long failed = Fleet.failed(calls);
    long stale = events(w, "stale", kill);
    long resyncs = events(w, "resync", kill);
    long staleMs = w.json().events("recovered").stream().filter(n -> !JsonLog.ts(n).isBefore(kill))
        .mapToLong(n -> n.path("stale_ms").asLong()).sum();

    old.restart();
    etcd.awaitHealthy(Duration.ofSeconds(30));
    ctx.sleep(Duration.ofSeconds(2));
    ctx.await("the watcher to be fresh after the restart", Duration.ofSeconds(30),
        () -> events(w, "stale", kill) == events(w, "recovered", kill));
    List<String> truthUp = EtcdTruth.ids(all, "hello");
    List<String> seenUp = sorted(Fleet.lastSet(w));
    List<JsonNode> allCalls = Fleet.calls(f.a, kill, Instant.now());
    long allFailed = Fleet.failed(allCalls);
    long reregistered = f.providers.stream().filter(p -> events(p, "lease_lost", kill) > 0).count();
    long unreachable = f.providers.stream().filter(p -> events(p, "unreachable", kill) > 0).count();
    long lostAtStart = f.providers.stream().filter(p -> p.json().events("lease_lost").stream()
        .anyMatch(n -> JsonLog.ts(n).isBefore(kill))).count();

    boolean equalDown = seenDown.equals(truthDown) && truthDown.size() == 3;
    boolean equalUp = seenUp.equals(truthUp) && truthUp.size() == 3;
    boolean pass = failed == 0 && allFailed == 0 && equalDown && equalUp && reregistered == 0;
    String figures = String.format("killed leader %s, new leader %s after %d ms; A %d calls from the kill until"
            + " settled, %d failed (%d of %d including %s's restart); watcher %s etcd with %s down (%s), %s after its"
            + " restart; watcher %d stale (%d ms in all), %d resync(s); providers: %d saw a keepalive fail, %d lost"
            + " their lease and re-registered%s",
        old.name(), leader.name(), electionMs, calls.size(), failed, allFailed, allCalls.size(), old.name(),
        equalDown ? "equal to" : "DIFFERENT from", old.name(), equalDown ? seenDown : seenDown + " vs " + truthDown,
        equalUp ? "equal" : "DIFFERENT " + seenUp + " vs " + truthUp, stale, staleMs, resyncs, unreachable,
        reregistered, lostAtStart == 0 ? ""
            : " (before the kill, during start-up, " + lostAtStart + " provider(s) had lost a lease)");
    return ScenarioResult.of(this, pass, figures,
        "a new leader; A failures = 0; the watcher's set equals etcd's after it settles; no lease lost to the"
            + " leader change");
  }

  private static long events(ChildProcess p, String event, Instant after) {
    return p.json().events(event).stream().filter(n -> !JsonLog.ts(n).isBefore(after)).count();
  }

  private static List<String> sorted(List<String> ids) {
    return List.copyOf(new TreeSet<>(ids));
  }

}
