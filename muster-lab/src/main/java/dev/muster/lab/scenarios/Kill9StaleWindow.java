package dev.muster.lab.scenarios;

import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.EtcdCluster;
import java.util.List;

/** A provider killed with SIGKILL stays in the sets until its lease expires; B's calls to it are refused fast. */
public final class Kill9StaleWindow implements Scenario {
  @Override
  public String name() {
    return "kill9_stale_window";
  }

  @Override
  public String shows() {
    return "SIGKILL a provider: window until consumers drop it; A vs B failures";
  }

  @Override
  public String seed() {
    return "window 2823 ms; B 19 failures (fast refusals), A 0";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3).consumers(ctx, etcd.endpointsString(),
        true, true, true);
    Kill9Check kill9 = Kill9Check.run(ctx, f, f.provider(2));
    return ScenarioResult.of(this, kill9.passed(), Figures.withWindows(kill9.summary(), List.of(kill9.window())),
        Kill9Check.INVARIANT);
  }
}
