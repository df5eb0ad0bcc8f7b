package dev.muster.lab.scenarios;

import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;

/** A provider resumed after a SIGSTOP longer than its TTL notices the lost lease and registers again. */
public final class SigcontDetectsLeaseLoss implements Scenario {
  @Override
  public String name() {
    return "sigcont_detects_lease_loss";
  }

  @Override
  public String shows() {
    return "SIGCONT after SIGSTOP > TTL: lease loss noticed, consumers re-add";
  }

  @Override
  public String seed() {
    return "lease loss seen 4-10 ms after SIGCONT, consumers re-add in 10-14 ms";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 2).consumers(ctx, etcd.endpointsString(),
        false, false, true);
    ChildProcess p = f.provider(1);
    Instant stop = Instant.now();
    p.pause();
    ctx.mark("sigstop", p.name());
    ctx.await("the watcher drops p1", Duration.ofSeconds(20), () -> Fleet.removedAt(f.watcher, "p1", stop).isPresent());
    ctx.sleep(Duration.ofMillis(300));
    Instant cont = Instant.now();
    p.resume();
    ctx.mark("sigcont", p.name());
    ctx.await("p1 re-registered", Duration.ofSeconds(20), () -> p.json().has("reregistered"));
    ctx.await("the watcher re-adds p1", Duration.ofSeconds(20), () -> Fleet.presentAt(f.watcher, "p1", cont).isPresent());
    Instant lost = JsonLog.ts(p.json().events("lease_lost").get(0));
    Instant reregistered = JsonLog.ts(p.json().events("reregistered").get(0));
    Instant readded = Fleet.presentAt(f.watcher, "p1", cont).orElseThrow();
    long noticed = Fleet.millis(cont, lost);
    long seen = Fleet.millis(cont, readded);
    boolean pass = noticed >= 0 && seen < 2000;
    return ScenarioResult.of(this, pass, String.format("lease loss seen %d ms after SIGCONT, re-registered at %d ms,"
        + " watcher re-adds at %d ms", noticed, Fleet.millis(cont, reregistered), seen),
        "re-registered under a new lease and visible again within 2 s of SIGCONT");
  }
}
