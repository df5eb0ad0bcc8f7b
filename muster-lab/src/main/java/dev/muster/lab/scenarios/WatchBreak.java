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
import java.util.TreeSet;

/**
 * The watch connection of one consumer is cut through the fault proxy; while it is cut, p1 leaves (SIGTERM) and p4
 * joins (and, in the compaction variant, history is compacted); then the connection comes back. Three variants:
 * Muster's cache resuming at its checkpoint (last), the same with compaction (one resync by replacement), and consumer C, the
 * negative control that re-watches from "now" without a range.
 */
public final class WatchBreak implements Scenario {
  /** Which consumer, and whether history is compacted during the cut. */
  public enum Variant { RESUME, COMPACTION, FROM_NOW }

  private final Variant variant;

  public WatchBreak(Variant variant) {
    this.variant = variant;
  }

  @Override
  public String name() {
    return switch (variant) {
      case RESUME -> "watch_resume_from_revision";
      case COMPACTION -> "compaction_forces_resync";
      case FROM_NOW -> "negative_resume_from_now";
    };
  }

  @Override
  public String shows() {
    return switch (variant) {
      case RESUME -> "watch cut, p1 leaves and p4 joins, watch back: resume at the checkpoint (last)";
      case COMPACTION -> "the same with compaction during the cut: one resync by replacement";
      case FROM_NOW -> "negative control C: re-watch from now, no range";
    };
  }

  @Override
  public String seed() {
    return switch (variant) {
      case RESUME -> "A resumes at its checkpoint and matches etcd";
      case COMPACTION -> "A gets compact_revision, resyncs by replacement, matches etcd";
      case FROM_NOW -> "C keeps a deleted address, misses a new one";
    };
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String direct = etcd.endpointsString();
    FaultProxy proxy = ctx.proxy(etcd.member(0).clientUrl());
    Fleet f = Fleet.providers(ctx, "hello", direct, 3, "--drain", "0s");
    String[] extra = variant == Variant.FROM_NOW ? new String[] {"--resume-from-now"} : new String[0];
    ChildProcess w = ctx.watcher(variant == Variant.FROM_NOW ? "consumer-c" : "consumer-a", "hello",
        proxy.uri().toString(), extra);
    ctx.await("the watcher's snapshot with 3", Duration.ofSeconds(30), () -> Fleet.lastSet(w).size() == 3);

    proxy.cut();
    ctx.mark("cut", "the watcher's connection");
    ctx.await("the watcher reports stale", Duration.ofSeconds(20), () -> w.json().has("stale"));
    f.provider(1).terminate();
    ctx.await("p1 revoked", Duration.ofSeconds(20), () -> f.provider(1).json().has("revoked"));
    ChildProcess p4 = ctx.provider("p4", "hello", direct, "--drain", "0s");
    ctx.await("p4 registered", Duration.ofSeconds(30), () -> p4.json().has("registered"));
    if (variant == Variant.COMPACTION) {
      etcd.compact();
      ctx.mark("compact", "to the current revision");
    }
    Instant pass = Instant.now();
    proxy.pass();
    ctx.mark("pass", "the watcher's connection");
    ctx.await("the watcher recovers", Duration.ofSeconds(30), () -> w.json().has("recovered"));
    ctx.sleep(Duration.ofSeconds(2));

    List<String> truth = EtcdTruth.ids(direct, "hello");
    List<String> seen = new TreeSet<>(Fleet.lastSet(w)).stream().toList();
    long resyncs = w.json().events("resync").size();
    boolean matches = seen.equals(truth);
    String figures = String.format("after the cut: consumer %s, etcd %s, %s, %d resync(s), recovered %d ms after"
        + " the proxy passed again", seen, truth, matches ? "equal" : "DIFFERENT", resyncs,
        Fleet.millis(pass, JsonLog.ts(w.json().events("recovered").get(0))));
    return switch (variant) {
      case RESUME -> ScenarioResult.of(this, matches && resyncs == 0, figures, "equal to etcd, no resync");
      case COMPACTION -> ScenarioResult.of(this, matches && resyncs == 1, figures, "equal to etcd after 1 resync");
      case FROM_NOW -> ScenarioResult.of(this, seen.contains("p1") && !seen.contains("p4"), figures,
          "C still holds p1 and never learns of p4 (it is wrong, as expected)");
    };
  }

}
