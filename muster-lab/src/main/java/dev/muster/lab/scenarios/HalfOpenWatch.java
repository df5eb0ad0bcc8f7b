package dev.muster.lab.scenarios;

import dev.muster.lab.EtcdTruth;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * A half-open watch: the watcher reaches etcd through the fault proxy, which is switched to black hole — its TCP
 * connections stay open and new ones are accepted, but no byte flows either way, so no error ever reaches the
 * client. Only the cache's progress requests ({@code --progress-interval 1s --progress-timeout 1s}) can notice.
 * Measured: the time from the black hole to the watcher's {@code stale} line (and that a quiet but healthy
 * connection raised no stale line before). While black-holed, p1 leaves (SIGTERM, drain 0) and p4 joins; the
 * watcher's reconnects also go through the proxy, so it stays stale until the proxy passes traffic again. Then its
 * last set must equal etcd's.
 */
public final class HalfOpenWatch implements Scenario {
  @Override
  public String name() {
    return "half_open_watch";
  }

  @Override
  public String shows() {
    return "watch connection black-holed (open, silent): progress requests detect it; set equals etcd after";
  }

  @Override
  public String seed() {
    return "beyond the seeds (unproven there): half-open watch connection (traffic black-holed, not closed)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String direct = etcd.endpointsString();
    FaultProxy proxy = ctx.proxy(etcd.member(0).clientUrl());
    Fleet f = Fleet.providers(ctx, "hello", direct, 3, "--drain", "0s");
    ChildProcess w = ctx.watcher("watcher", "hello", proxy.uri().toString(), "--progress-interval", "1s",
        "--progress-timeout", "1s");
    ctx.await("the watcher's snapshot with 3", Duration.ofSeconds(30), () -> Fleet.lastSet(w).size() == 3);
    // A quiet, healthy connection: progress requests are answered, so no stale line may appear.
    ctx.sleep(Duration.ofSeconds(4));
    long falseAlarms = w.json().events("stale").size();

    Instant hole = Instant.now();
    proxy.blackhole();
    ctx.await("the watcher reports stale", Duration.ofSeconds(30), () -> first(w, "stale", hole).isPresent());
    long detectionMs = Fleet.millis(hole, first(w, "stale", hole).orElseThrow());

    f.provider(1).terminate();
    ctx.await("p1 revoked", Duration.ofSeconds(20), () -> f.provider(1).json().has("revoked"));
    ChildProcess p4 = ctx.provider("p4", "hello", direct, "--drain", "0s");
    ctx.await("p4 registered", Duration.ofSeconds(30), () -> p4.json().has("registered"));
    ctx.sleep(Duration.ofSeconds(1));
    List<String> duringHole = sorted(Fleet.lastSet(w));
    boolean recoveredInHole = first(w, "recovered", hole).isPresent();

    Instant pass = Instant.now();
    proxy.pass();
    ctx.await("the watcher recovers", Duration.ofSeconds(30), () -> first(w, "recovered", pass).isPresent());
    long recoveryMs = Fleet.millis(pass, first(w, "recovered", pass).orElseThrow());
    ctx.sleep(Duration.ofSeconds(2));

    List<String> truth = EtcdTruth.ids(direct, "hello");
    List<String> seen = sorted(Fleet.lastSet(w));
    long resyncs = w.json().events("resync").size();
    boolean matches = seen.equals(truth) && truth.equals(List.of("p2", "p3", "p4"));
    String figures = String.format("stale %d ms after the black hole (progress every 1 s, timeout 1 s; %d stale"
            + " lines on the healthy connection before); while black-holed the watcher held %s%s; recovered %d ms"
            + " after the proxy passed again; then watcher %s, etcd %s: %s, %d resync(s)", detectionMs, falseAlarms,
        duringHole, recoveredInHole ? " and RECOVERED (through a black hole?)" : ", stale", recoveryMs, seen, truth,
        matches ? "equal" : "DIFFERENT", resyncs);
    boolean ok = matches && falseAlarms == 0 && !recoveredInHole && detectionMs <= 10_000;
    return ScenarioResult.of(this, ok, figures, "stale within 10 s of the black hole, none before; not recovered"
        + " while black-holed; equal to etcd after");
  }

  private static Optional<Instant> first(ChildProcess p, String event, Instant after) {
    return p.json().events(event).stream().map(JsonLog::ts).filter(t -> !t.isBefore(after)).findFirst();
  }

  private static List<String> sorted(List<String> ids) {
    return List.copyOf(new TreeSet<>(ids));
  }

}
