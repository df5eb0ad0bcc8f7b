package dev.muster.lab.scenarios;

import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.EtcdCluster;
import java.util.List;

/**
 * kill9_stale_window through gRPC: three {@code muster grpc-serve} providers, A ({@code grpc-call --policy muster},
 * ejection + retry) and B ({@code --policy round_robin}, no retry) calling Echo every 50 ms within the lab's 300 ms,
 * and a watcher. p2 gets SIGKILL; {@link Kill9Check} measures the stale window and A's and B's failures in it.
 */
public final class GrpcKill9StaleWindow implements Scenario {
  @Override
  public String name() {
    return "grpc_kill9_stale_window";
  }

  @Override
  public String shows() {
    return "SIGKILL a gRPC provider: window until the registry drops it; muster policy (A) vs round_robin (B)"
        + " failures (B fails only the calls in flight: grpc-java drops the reset connection at once)";
  }

  @Override
  public String seed() {
    return "beyond the seeds: gRPC (kill9_stale_window through muster-grpc)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.grpcProviders(ctx, "echo", etcd.endpointsString(), 3)
        .grpcConsumers(ctx, etcd.endpointsString(), true, true, true, ctx.params().attemptTimeout());
    Kill9Check kill9 = Kill9Check.run(ctx, f, f.provider(2));
    return ScenarioResult.of(this, kill9.passedWithoutNegativeControl(),
        Figures.withWindows(kill9.grpcSummary(), List.of(kill9.window())), Kill9Check.GRPC_INVARIANT);
  }
}
