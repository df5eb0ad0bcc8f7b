package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Issue 36 through grpc-java's own xDS client: 3 {@code grpc-serve} providers, consumer A ({@code grpc-call
 * --xds-server}) on {@code muster xds} (T) and consumer B on a second {@code muster xds --no-push} (the negative
 * control: it serves each service's first set and never pushes, as a control plane fed by a static snapshot).
 * A fourth provider registers: A's first call to it is timed from its registration (target: within 1 s); B never
 * reaches it. Then p2 gets SIGKILL: from its lease's expiry + 1 s on, A's calls must neither fail nor reach p2.
 *
 * <p>What B shows about the kill: nothing separates it there, and the figures say so. A SIGKILLed process's
 * connections close, and grpc-java's round robin (the policy the xDS cluster names) stops picking it at once, pushed
 * or not (docs/lab-grpc-controls.md); the push is what lets A forget p2 and hear of p4.
 */
public final class XdsPushAndKill9 implements Scenario {
  private static final Duration FIRST_CALL_TARGET = Duration.ofSeconds(1);
  private static final Duration DEADLINE = Duration.ofSeconds(1);

  @Override
  public String name() {
    return "xds_push_and_kill9";
  }

  @Override
  public String shows() {
    return "grpc-java's xDS client on muster xds (A) vs on a control plane that never pushes (B): a new provider's"
        + " first call, and a SIGKILLed one after its lease expires";
  }

  @Override
  public String seed() {
    return "issue 36: gRPC in any language through muster xds";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.grpcProviders(ctx, "echo", endpoints, 3);
    int tPort = LoopbackPorts.pick();
    int nPort = LoopbackPorts.pick();
    ChildProcess t = ctx.xdsServer("xds-t", endpoints, tPort);
    ChildProcess n = ctx.xdsServer("xds-n", endpoints, nPort, "--no-push");
    ChildProcess a = ctx.xdsConsumer("consumer-a", f.service, tPort, DEADLINE);
    ChildProcess b = ctx.xdsConsumer("consumer-b", f.service, nPort, DEADLINE);
    f.awaitWarm(ctx, a, b);

    ChildProcess p4 = ctx.grpcProvider("p4", f.service, endpoints);
    ctx.await("p4 registered", Duration.ofSeconds(30), () -> Callers.firstAt(p4, "registered", Instant.EPOCH)
        .isPresent());
    Instant registered = Callers.firstAt(p4, "registered", Instant.EPOCH).orElseThrow();
    ctx.mark("registered", "p4");
    ctx.await("A calls p4", Duration.ofSeconds(10), () -> firstAnsweredBy(a, "p4", registered).isPresent());
    long firstMs = Fleet.millis(registered, firstAnsweredBy(a, "p4", registered).orElseThrow());
    ctx.sleep(Duration.ofSeconds(3));
    boolean bReachedP4 = firstAnsweredBy(b, "p4", registered).isPresent();

    ChildProcess p2 = f.provider(2);
    Instant kill = Instant.now();
    p2.kill();
    ctx.mark("sigkill", p2.name());
    Instant expired = kill.plus(ctx.params().ttl()).plusSeconds(1);
    ctx.sleep(Duration.between(kill, expired).plusSeconds(3));
    Instant end = Instant.now();
    List<JsonNode> aLate = Fleet.calls(a, expired, end.minus(DEADLINE));
    List<JsonNode> bLate = Fleet.calls(b, expired, end.minus(DEADLINE));
    long aToP2 = Fleet.attemptsTo(aLate, "p2");
    List<JsonNode> aAround = Fleet.calls(a, kill, end.minus(DEADLINE));

    boolean pass = firstMs <= FIRST_CALL_TARGET.toMillis() && !bReachedP4 && !aLate.isEmpty()
        && Fleet.failed(aLate) == 0 && aToP2 == 0;
    return ScenarioResult.of(this, pass, String.format("p4's first call through muster xds %d ms after it"
            + " registered (A); B (no push) reached p4: %s; after p2's SIGKILL: A %d failed of %d calls from the kill"
            + " on, %d failed of %d from its lease's expiry + 1 s (to p2: %d); B %d failed of %d from the expiry"
            + " + 1 s; A answered by %s, B by %s; xds servers: T %s, N %s",
        firstMs, bReachedP4 ? "yes" : "no", Fleet.failed(aAround), aAround.size(), Fleet.failed(aLate),
        aLate.size(), aToP2, Fleet.failed(bLate), bLate.size(), answeredBy(aLate), answeredBy(bLate),
        t.isAlive() ? "up" : "ended", n.isAlive() ? "up" : "ended"),
        "A's first call to p4 within 1 s of its registration; B (a control plane that never pushes) never reaches"
            + " p4 (the negative control); from p2's lease expiry + 1 s, A: calls made, 0 failed, none to p2; B's"
            + " figures reported (grpc-java stops picking a closed connection by itself)");
  }


  /** When {@code caller}'s first call started after {@code after} that {@code id} answered. */
  private static Optional<Instant> firstAnsweredBy(ChildProcess caller, String id, Instant after) {
    return Fleet.calls(caller, after, Instant.MAX).stream()
        .filter(c -> c.path("ok").asBoolean() && Fleet.attemptsTo(List.of(c), id) > 0)
        .map(dev.muster.testing.JsonLog::ts).findFirst();
  }

  private static TreeSet<String> answeredBy(List<JsonNode> calls) {
    TreeSet<String> ids = new TreeSet<>();
    calls.forEach(c -> c.path("attempts").forEach(x -> ids.add(x.asText())));
    return ids;
  }
}
