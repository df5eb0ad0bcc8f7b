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
 * kill9_stale_window through gRPC: three {@code muster grpc-serve} providers, A ({@code grpc-call --policy muster},
 * ejection + retry) and B ({@code --policy round_robin}, no retry) calling Say every 50 ms, and a watcher. p2 gets
 * SIGKILL; the stale window lasts until the watcher drops it.
 *
 * <p>What separates A from B here is not the window. A SIGKILLed process's sockets are closed by the kernel, so
 * every channel's connection to p2 ends at once: grpc-java moves that subchannel to IDLE, its reconnect is refused,
 * and {@code round_robin} picks only READY subchannels, so B sends nothing to p2 in the window although the registry
 * still lists it (docs/lab-grpc-controls.md cites the grpc-java source). What B loses is the calls in flight on the
 * connection at the kill: they fail UNAVAILABLE, and B does not retry; A retries those idempotent calls on another
 * endpoint. So every call asks the server to wait {@value #DELAY_MS} ms ({@code --delay}), as a real method takes
 * time: about 10 of each caller's calls are in flight at any moment, about 3 of them on p2. (With the lab's 1 ms Say
 * B rarely has a call on p2 at the kill: B failed 0 calls in each of the three committed runs, docs/lab-output*.txt.)
 */
public final class GrpcKill9StaleWindow implements Scenario {
  private static final long DELAY_MS = 500;
  /** Above the delay with room for a loaded machine; A's call deadline is this × (1 + retries). */
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(1500);
  /** What etcd's expiry loop, the delete's delivery and a busy 2-core machine may add to the TTL. */
  private static final Duration SLACK = Duration.ofSeconds(2);

  @Override
  public String name() {
    return "grpc_kill9_stale_window";
  }

  @Override
  public String shows() {
    return "SIGKILL a gRPC provider with 500 ms calls in flight: muster policy with retry (A) vs round_robin (B);"
        + " B loses the calls in flight, then none in the window (grpc-java drops the reset connection)";
  }

  @Override
  public String seed() {
    return "beyond the seeds: gRPC (kill9_stale_window through muster-grpc)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.grpcProviders(ctx, "echo", etcd.endpointsString(), 3)
        .grpcConsumers(ctx, etcd.endpointsString(), true, true, true, ATTEMPT_TIMEOUT, "--delay", DELAY_MS + "ms");
    Duration aDeadline = ATTEMPT_TIMEOUT.multipliedBy(1L + ctx.params().maxRetries());
    ChildProcess p2 = f.provider(2);
    Instant kill = Instant.now();
    p2.kill();
    ctx.mark("sigkill", p2.name());
    Instant removed = f.awaitRemoved(ctx, p2.name(), kill, Duration.ofSeconds(20));
    ctx.sleep(aDeadline.plusMillis(500)); // every call started in the window has ended and is logged
    StaleWindow window = f.staleWindow(p2, kill, removed, ctx.params().ttl());

    List<JsonNode> aInFlight = Fleet.inFlightAt(f.a.json().events("call"), kill);
    List<JsonNode> bInFlight = Fleet.inFlightAt(f.b.json().events("call"), kill);
    List<JsonNode> a = Fleet.calls(f.a, kill, removed);
    List<JsonNode> b = Fleet.calls(f.b, kill, removed);
    long aFailed = Fleet.failed(aInFlight) + Fleet.failed(a);
    long bInFlightFailed = Fleet.failed(bInFlight);
    long bWindowFailed = Fleet.failed(b);
    boolean pass = aFailed == 0 && !a.isEmpty() && bInFlightFailed > 0
        && window.windowMs() <= ctx.params().ttl().plus(SLACK).toMillis();
    return ScenarioResult.of(this, pass, Figures.withWindows(String.format("window %d ms (not split: grpc-serve logs"
            + " no renewals); calls in flight at the kill: B (round_robin, no retry) %d failed of %d, A (muster) %d"
            + " of %d; calls started in the window: B %d failed of %d, A %d of %d%s",
        window.windowMs(), bInFlightFailed, bInFlight.size(), Fleet.failed(aInFlight), aInFlight.size(),
        bWindowFailed, b.size(), Fleet.failed(a), a.size(), Fleet.failures(bInFlight)), List.of(window)),
        "A failures = 0 (in flight at the kill and in the window) with A calling in the window; B fails calls in"
            + " flight at the kill (the negative control: no retry); B's failures in the window reported, expected"
            + " 0 (grpc-java's round_robin stops picking the reset connection itself); the window ends within the"
            + " TTL + 2 s");
  }
}
