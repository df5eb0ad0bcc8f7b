package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.lab.StaleWindow;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * sigstop_stale_window through gRPC, one round: a frozen {@code grpc-serve} provider keeps its TCP connection open,
 * so no channel notices it before the registry drops it, and a call sent to it hangs. B ({@code round_robin}, no
 * retry) fails every call that lands on it for the whole window. A ({@code muster} policy with
 * {@code MusterRetryInterceptor}) gives each attempt the lab's attempt timeout: an attempt that hangs on the frozen
 * server times out, counts towards its ejection and is retried on another endpoint within the call's deadline
 * (attempt timeout × (1 + retries)), so A fails none.
 */
public final class GrpcSigstopStaleWindow implements Scenario {
  @Override
  public String name() {
    return "grpc_sigstop_stale_window";
  }

  @Override
  public String shows() {
    return "SIGSTOP a gRPC provider: window until the registry drops it; muster policy with attempt timeout + retry"
        + " (A) vs round_robin (B) failures";
  }

  @Override
  public String seed() {
    return "beyond the seeds: gRPC (sigstop_stale_window through muster-grpc)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.grpcProviders(ctx, "echo", etcd.endpointsString(), 3)
        .grpcConsumers(ctx, etcd.endpointsString(), true, true, true, ctx.params().attemptTimeout());
    ChildProcess p = f.provider(2);
    Instant stop = Instant.now();
    p.pause();
    ctx.mark("sigstop", p.name());
    Instant removed = f.awaitRemoved(ctx, p.name(), stop, Duration.ofSeconds(20));
    ctx.sleep(Duration.ofMillis(500)); // calls started in the window end
    StaleWindow window = f.staleWindow(p, stop, removed, ctx.params().ttl());
    List<JsonNode> a = Fleet.calls(f.a, stop, removed);
    List<JsonNode> b = Fleet.calls(f.b, stop, removed);
    long aFailed = Fleet.failed(a);
    long bFailed = Fleet.failed(b);
    p.resume();
    ctx.mark("sigcont", p.name());
    boolean pass = aFailed == 0 && !a.isEmpty() && bFailed > 0
        && window.windowMs() <= ctx.params().ttl().plusSeconds(2).toMillis();
    return ScenarioResult.of(this, pass, Figures.withWindows(String.format("window %d ms (not split: grpc-serve logs"
            + " no renewals); B (round_robin, no retry) %d failures of %d calls, A (muster) %d of %d",
        window.windowMs(), bFailed, b.size(), aFailed, a.size()), List.of(window)),
        "A failures = 0 with A calling in the window; B fails in the window (the negative control); the window ends"
            + " within the TTL + 2 s");
  }
}
