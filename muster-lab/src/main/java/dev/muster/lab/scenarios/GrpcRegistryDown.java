package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * etcd_restart_recovery through gRPC: the registry SIGKILLed for 8 s under {@code muster:///} channels. The
 * resolver keeps the last known set, so a channel has nothing to re-resolve and goes on calling; and while the
 * registry is down nothing can drop a provider that stops answering, so only the consumer's own policy can route
 * around one.
 *
 * <p>How: 3 {@code grpc-serve} providers; consumer A ({@code grpc-call --policy muster}, the lab's retries) and
 * consumer C ({@code --policy pick_first}, grpc-java's default policy, the control) call Say every 50 ms within
 * 1 s per attempt; a watcher. etcd is SIGKILLed; 1 s later the provider C is connected to (pick_first sends every
 * call to one) is frozen with SIGSTOP for {@value #FROZEN_S} s, then resumed; etcd is restarted on its data 8 s
 * after the kill, and the watcher must recover with all 3 providers. Counted from the kill to 2 s after etcd
 * answered, the freeze apart: A's and C's calls and failures.
 *
 * <p>Why the freeze: without it the control cannot fail, and issue 33's runs showed C 0 failures of 221. The data
 * path never touches etcd, and the resolver goes on delivering the last set (marked stale) instead of an error, so
 * no channel learns of the outage; a resolver that reported it as an error would have made pick_first fail every
 * call (grpc-java's {@code PickFirstLoadBalancer.handleNameResolutionError} shuts its subchannel down), but that
 * control would test the resolver, which A and C share. A frozen provider keeps its TCP connection open and READY,
 * so C's {@code pick_first} keeps sending it every call, each failing at its deadline; A's attempt timeout ends
 * the attempt, ejects the provider and retries on another (docs/lab-grpc-controls.md).
 */
public final class GrpcRegistryDown implements Scenario {
  private static final Duration DOWN = Duration.ofSeconds(8);
  private static final Duration FREEZE_AFTER = Duration.ofSeconds(1);
  private static final long FROZEN_S = 4;
  private static final Duration FROZEN = Duration.ofSeconds(FROZEN_S);
  /**
   * Not the lab's 300 ms: on a loaded 2-core machine (etcd restarting next to 7 JVMs) a slow answer would fail C,
   * which never retries, for a reason this scenario is not about (one run, before attempts had their own timeout:
   * 14 of 242 of A's calls DEADLINE_EXCEEDED, none UNAVAILABLE).
   */
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(1);

  @Override
  public String name() {
    return "grpc_registry_down";
  }

  @Override
  public String shows() {
    return "etcd SIGKILLed for 8 s under muster:/// channels, the provider pick_first uses frozen for 4 s of it:"
        + " muster policy (A) vs pick_first (C, control) on the last known set";
  }

  @Override
  public String seed() {
    return "beyond the seeds: gRPC (etcd_restart_recovery through muster-grpc)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.grpcProviders(ctx, "echo", endpoints, 3).grpcConsumers(ctx, endpoints, true, false, true,
        ATTEMPT_TIMEOUT);
    ChildProcess c = ctx.grpcConsumer("consumer-c", f.service, endpoints, "pick_first", 0, ATTEMPT_TIMEOUT);
    ctx.await("C: 30 calls in a row ok", Duration.ofSeconds(60), () -> Callers.lastOk(c, Fleet.WARM_CALLS));
    List<JsonNode> warm = c.json().events("call");
    String used = warm.get(warm.size() - 1).path("attempts").path(0).asText();
    ChildProcess frozen = f.providers.stream().filter(p -> p.name().equals(used)).findFirst()
        .orElseThrow(() -> new IllegalStateException("C's calls answered by " + used + ", not one of the fleet"));

    Instant kill = Instant.now();
    etcd.member(0).kill();
    ctx.mark("etcd_sigkill", "m0");
    ctx.sleep(FREEZE_AFTER);
    Instant freeze = Instant.now();
    frozen.pause();
    ctx.mark("sigstop", frozen.name());
    ctx.sleep(FROZEN);
    frozen.resume();
    Instant thaw = Instant.now();
    ctx.mark("sigcont", frozen.name());
    ctx.sleep(DOWN.minus(Duration.between(kill, thaw)));
    etcd.member(0).restart();
    ctx.mark("etcd_answering", "m0 restarted");
    Instant answering = Instant.now();
    ctx.await("the watcher recovers", Duration.ofSeconds(30),
        () -> Callers.firstAt(f.watcher, "recovered", kill).isPresent());
    Instant recovered = Callers.firstAt(f.watcher, "recovered", kill).orElseThrow();
    ctx.await("the watcher lists all 3 again", Duration.ofSeconds(10), () -> Fleet.lastSet(f.watcher).size() == 3);
    ctx.sleep(Duration.ofSeconds(2));
    Instant end = answering.plusSeconds(2);

    List<JsonNode> aFrozen = frozen(f.a, kill, freeze, thaw);
    List<JsonNode> cFrozen = frozen(c, kill, freeze, thaw);
    List<JsonNode> aRest = rest(f.a, kill, freeze, thaw, end);
    List<JsonNode> cRest = rest(c, kill, freeze, thaw, end);
    long aFailed = Fleet.failed(aFrozen) + Fleet.failed(aRest);
    long cFrozenFailed = Fleet.failed(cFrozen);
    long reregistered = f.providers.stream().filter(p -> Callers.firstAt(p, "reregistered", kill).isPresent())
        .count();
    int lastSet = Fleet.lastSet(f.watcher).size();
    boolean pass = aFailed == 0 && aFrozen.size() + aRest.size() >= DOWN.dividedBy(ctx.params().callInterval()) / 2
        && cFrozenFailed > 0 && lastSet == 3;
    return ScenarioResult.of(this, pass, String.format("etcd down %.1f s, %s (C's) frozen %d ms of it; calls in flight while frozen:"
            + " A (muster) %d failures of %d calls, answered by %s; C (pick_first, control) %d failures of %d; from"
            + " the kill to 2 s after etcd answered, the freeze apart: A %d of %d, C %d of %d, answered by %s;"
            + " watcher recovered %d ms after etcd answered, %d of 3 listed; providers re-registered: %d",
        Fleet.millis(kill, answering) / 1000.0, frozen.name(), Fleet.millis(freeze, thaw), Fleet.failed(aFrozen),
        aFrozen.size(), servedBy(aFrozen), cFrozenFailed, cFrozen.size(), Fleet.failed(aRest), aRest.size(),
        Fleet.failed(cRest), cRest.size(), servedBy(cRest), Fleet.millis(answering, recovered), lastSet,
        reregistered),
        "A failures = 0 over at least half its call slots; C (pick_first, no retry) fails while its provider is"
            + " frozen (the negative control); C's failures outside the freeze reported, expected 0 (the resolver"
            + " keeps the last set); the watcher recovers with all 3 providers");
  }

  /**
   * The caller's calls in flight while the provider was frozen: started after the kill and before the thaw, ended
   * after the freeze (a call sent a few ms before the SIGSTOP hangs too).
   */
  private static List<JsonNode> frozen(ChildProcess caller, Instant kill, Instant freeze, Instant thaw) {
    return Fleet.calls(caller, kill, thaw).stream().filter(n -> Fleet.ended(n).isAfter(freeze)).toList();
  }

  /** The caller's calls from the kill to {@code end} that were not in flight while the provider was frozen. */
  private static List<JsonNode> rest(ChildProcess caller, Instant kill, Instant freeze, Instant thaw, Instant end) {
    List<JsonNode> calls = new ArrayList<>(Fleet.calls(caller, kill, freeze).stream()
        .filter(n -> !Fleet.ended(n).isAfter(freeze)).toList());
    calls.addAll(Fleet.calls(caller, thaw, end));
    return calls;
  }

  private static TreeSet<String> servedBy(List<JsonNode> calls) {
    TreeSet<String> ids = new TreeSet<>();
    calls.forEach(n -> n.path("attempts").forEach(id -> ids.add(id.asText())));
    return ids;
  }
}
