package dev.muster.lab.scenarios;

import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.EtcdCluster;

/** SIGTERM with drain 0: the provider revokes its lease; the delete reaches the watcher milliseconds later. */
public final class GracefulStopRevokesLease implements Scenario {
  @Override
  public String name() {
    return "graceful_stop_revokes_lease";
  }

  @Override
  public String shows() {
    return "SIGTERM (drain 0): revoke, and how fast the delete reaches consumers";
  }

  @Override
  public String seed() {
    return "delete reaches consumers 3 ms after revoke";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3, "--drain", "0s")
        .consumers(ctx, etcd.endpointsString(), true, false, true);
    GracefulStopCheck stop = GracefulStopCheck.run(ctx, f, f.provider(1));
    return ScenarioResult.of(this, stop.passed(), stop.summary(), GracefulStopCheck.INVARIANT);
  }
}
