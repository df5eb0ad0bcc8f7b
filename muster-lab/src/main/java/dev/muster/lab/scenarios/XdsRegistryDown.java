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

/**
 * etcd SIGKILLed for 10 s under xDS clients (issue 36): 3 {@code grpc-serve} providers; on {@code muster xds} (T),
 * grpc-java's xDS client (A, {@code grpc-call --xds-server}) and Node's (AN, {@code @grpc/grpc-js-xds}); on a second
 * server started with {@code --empty-on-stale} (N, the negative control: it pushes an empty assignment while its
 * cache is stale, as an xDS server that takes its own error for "no endpoints"), Node's again (BN) and grpc-java's
 * (B). Counted from the kill to 2 s after etcd answered: every call of each.
 *
 * <p>Why Node separates and grpc-java may not: grpc-java keeps calling the endpoints it is connected to when an
 * assignment empties (its cluster resolver keeps the old children until it has new ones; docs/design-xds.md §3.2),
 * Node fails the calls. B's figures are reported for that reason; BN is the control that must fail.
 */
public final class XdsRegistryDown implements Scenario {
  private static final Duration DOWN = Duration.ofSeconds(10);
  private static final Duration DEADLINE = Duration.ofSeconds(1);

  @Override
  public String name() {
    return "xds_registry_down";
  }

  @Override
  public String shows() {
    return "etcd SIGKILLed for 10 s under grpc-java's and Node's xDS clients: muster xds keeps the last assignment"
        + " (A, AN) vs a server that empties it on its own error (BN, control; B reported)";
  }

  @Override
  public String seed() {
    return "issue 36: \"an xDS server that sends an empty assignment on its own error takes every client's traffic"
        + " down\"";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.grpcProviders(ctx, "echo", endpoints, 3);
    int tPort = LoopbackPorts.pick();
    int nPort = LoopbackPorts.pick();
    ctx.xdsServer("xds-t", endpoints, tPort);
    ctx.xdsServer("xds-n", endpoints, nPort, "--empty-on-stale");
    ChildProcess a = ctx.xdsConsumer("consumer-a", f.service, tPort, DEADLINE);
    ChildProcess an = ctx.nodeXdsConsumer("consumer-an", f.service, tPort, DEADLINE);
    ChildProcess b = ctx.xdsConsumer("consumer-b", f.service, nPort, DEADLINE);
    ChildProcess bn = ctx.nodeXdsConsumer("consumer-bn", f.service, nPort, DEADLINE);
    f.awaitWarm(ctx, a, an, b, bn);

    Instant kill = Instant.now();
    etcd.member(0).kill();
    ctx.mark("etcd_sigkill", "m0");
    ctx.sleep(DOWN);
    etcd.member(0).restart();
    Instant answering = Instant.now();
    ctx.mark("etcd_answering", "m0 restarted");
    ctx.sleep(Duration.ofSeconds(2).plus(DEADLINE));
    Instant end = answering.plusSeconds(2);

    List<JsonNode> aCalls = Fleet.calls(a, kill, end);
    List<JsonNode> anCalls = Fleet.calls(an, kill, end);
    List<JsonNode> bCalls = Fleet.calls(b, kill, end);
    List<JsonNode> bnCalls = Fleet.calls(bn, kill, end);
    long slots = DOWN.dividedBy(ctx.params().callInterval()) / 2;
    boolean pass = Fleet.failed(aCalls) == 0 && Fleet.failed(anCalls) == 0 && aCalls.size() >= slots
        && anCalls.size() >= slots && Fleet.failed(bnCalls) > 0;
    return ScenarioResult.of(this, pass, String.format("etcd down %.1f s; from the kill to 2 s after etcd answered:"
            + " on muster xds, A (grpc-java) %d failed of %d calls, AN (Node) %d of %d; on the server that empties"
            + " its assignment when stale, BN (Node, control) %d of %d%s, B (grpc-java) %d of %d",
        Fleet.millis(kill, answering) / 1000.0, Fleet.failed(aCalls), aCalls.size(), Fleet.failed(anCalls),
        anCalls.size(), Fleet.failed(bnCalls), bnCalls.size(), Fleet.failures(bnCalls), Fleet.failed(bCalls),
        bCalls.size()),
        "A and AN: 0 failures, each calling in at least half its slots, for the whole outage (the last assignment"
            + " stays served); BN fails calls (the negative control); B's figures reported (grpc-java keeps its"
            + " connected endpoints when an assignment empties)");
  }

}
