package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import dev.muster.testing.LoopbackPorts;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * grpc_graceful_drain through xDS (issue 36): a provider that gets SIGTERM publishes DRAINING, serves for its drain
 * (5 s), sends GOAWAY, lets its calls in flight finish and revokes. {@code muster xds} pushes DRAINING, which both
 * xDS clients read as "no new calls": grpc-java's (A, {@code grpc-call --xds-server}) and Node's (AN). The control
 * B is grpc-java's client on a server that never pushes ({@code muster xds --no-push}, hidden): it goes on sending
 * p1 new calls for the whole drain, which p1 still answers; what separates them is those calls, not failures.
 *
 * <p>How: 3 providers, p1 weight 200 and the others 100, each draining 5 s; every call asks the server to wait
 * {@value #DELAY_MS} ms, so calls are in flight on p1 at the signal. Counted from the logs: each consumer's failures
 * from a deadline before the signal on, its calls in flight across DRAINING that p1 answered, and the calls p1
 * answered that started {@value #GRACE_MS} ms or more after DRAINING was published (time for the push to arrive).
 */
public final class XdsGracefulDrain implements Scenario {
  private static final long DELAY_MS = 700;
  private static final long GRACE_MS = 1000;
  private static final Duration DRAIN = Duration.ofSeconds(5);
  private static final Duration DEADLINE = Duration.ofSeconds(3);

  @Override
  public String name() {
    return "xds_graceful_drain";
  }

  @Override
  public String shows() {
    return "SIGTERM a provider with 700 ms calls in flight under xDS clients: muster xds pushes DRAINING, no new call"
        + " reaches it, calls in flight finish (A grpc-java, AN Node); B on a server that never pushes keeps sending it"
        + " new calls for the whole drain";
  }

  @Override
  public String seed() {
    return "issue 36: SIGTERM → DRAINING: no new RPC to it, in-flight ones complete";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.grpcProviders(ctx, "echo", endpoints, 3, i -> new String[] {"--drain", DRAIN.toSeconds() + "s",
        "--weight", i == 1 ? "200" : "100"});
    int tPort = LoopbackPorts.pick();
    int nPort = LoopbackPorts.pick();
    ctx.xdsServer("xds-t", endpoints, tPort);
    ctx.xdsServer("xds-n", endpoints, nPort, "--no-push");
    ChildProcess a = ctx.xdsConsumer("consumer-a", f.service, tPort, DEADLINE, "--delay", DELAY_MS + "ms");
    ChildProcess an = ctx.nodeXdsConsumer("consumer-an", f.service, tPort, DEADLINE, DELAY_MS);
    ChildProcess b = ctx.xdsConsumer("consumer-b", f.service, nPort, DEADLINE, "--delay", DELAY_MS + "ms");
    f.awaitWarm(ctx, a, an, b);

    ChildProcess p1 = f.provider(1);
    Instant term = Instant.now();
    p1.terminate();
    ctx.mark("sigterm", "p1");
    ctx.await("p1 revoked", Duration.ofSeconds(30), () -> p1.json().has("revoked"));
    ctx.await("p1 exits", Duration.ofSeconds(30), () -> !p1.isAlive());
    ctx.sleep(DEADLINE.plusMillis(500));
    Instant draining = p1.json().events("draining").stream().map(JsonLog::ts).findFirst().orElse(term);
    Instant revoked = JsonLog.ts(p1.json().events("revoked").get(0));
    Instant late = draining.plusMillis(GRACE_MS);

    Figures fa = figures(a, term, draining, late, revoked);
    Figures fan = figures(an, term, draining, late, revoked);
    Figures fb = figures(b, term, draining, late, revoked);
    boolean pass = fa.failed == 0 && fan.failed == 0 && fa.newToP1 == 0 && fan.newToP1 == 0
        && fa.inFlightServed + fan.inFlightServed > 0 && fb.newToP1 > 0;
    return ScenarioResult.of(this, pass, String.format("SIGTERM→DRAINING %d ms, DRAINING→revoked %d ms (drain %d"
            + " ms); from a deadline before the SIGTERM: %s; %s; %s", Fleet.millis(term, draining),
        Fleet.millis(draining, revoked), DRAIN.toMillis(), fa.line("A (grpc-java, muster xds)"),
        fan.line("AN (Node, muster xds)"), fb.line("B (grpc-java, no push: control)")),
        "A and AN: 0 failures, no call p1 answered that started " + GRACE_MS + " ms or more after DRAINING, at"
            + " least one call in flight across DRAINING answered by p1 (A or AN); B (never pushed) sends p1 new calls"
            + " during the drain (the negative control)");
  }

  private record Figures(long calls, long failed, long inFlightServed, long newToP1) {
    String line(String who) {
      return String.format("%s failed %d of %d, %d in flight across DRAINING answered by p1, %d started after it"
          + " (+1 s) answered by p1", who, failed, calls, inFlightServed, newToP1);
    }
  }

  private static Figures figures(ChildProcess caller, Instant term, Instant draining, Instant late,
      Instant revoked) {
    List<JsonNode> calls = Fleet.calls(caller, term.minus(DEADLINE), Instant.now());
    long inFlight = calls.stream().filter(c -> byP1(c) && JsonLog.ts(c).isBefore(draining)
        && Fleet.ended(c).isAfter(draining)).count();
    long newToP1 = calls.stream().filter(c -> byP1(c) && !JsonLog.ts(c).isBefore(late)
        && JsonLog.ts(c).isBefore(revoked)).count();
    return new Figures(calls.size(), Fleet.failed(calls), inFlight, newToP1);
  }

  private static boolean byP1(JsonNode call) {
    return call.path("ok").asBoolean() && "p1".equals(call.path("attempts").path(0).asText());
  }
}
