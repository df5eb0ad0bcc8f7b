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
import java.util.List;

/**
 * Keeping the last known set while the registry is down has a cost: an instance that crashes meanwhile stays in
 * every set, since no cache can learn of it. Local ejection with a retry on another address (consumer E, A-style)
 * pays almost nothing for it; without them (consumer N, B-style) a share of the calls fails for as long as etcd is
 * down.
 *
 * <p>How: 3 providers, E and N calling every 50 ms and a watcher. etcd is SIGKILLed; once both callers' caches
 * printed {@code stale}, provider p2 is SIGKILLed. For the next 10 s (200 call slots; the seed counted 400, the lab keeps to its 5-minute budget) the failed calls of E and N
 * are counted from their logs. Then etcd is restarted on its data and the watcher must drop p2 when its lease
 * expires.
 */
public final class RegistryDownInstanceCrash implements Scenario {
  private static final Duration WINDOW = Duration.ofSeconds(10);

  @Override
  public String name() {
    return "registry_down_instance_crash";
  }

  @Override
  public String shows() {
    return "etcd down and a provider SIGKILLed meanwhile: ejection + retry (E) vs neither (N) on the last known set";
  }

  @Override
  public String seed() {
    return "no ejection 80/400 failed vs ejection 1/400";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3);
    ChildProcess e = ctx.consumer("consumer-e", f.service, endpoints, true);
    ChildProcess n = ctx.consumer("consumer-n", f.service, endpoints, false);
    ChildProcess watcher = ctx.watcher("watcher", f.service, endpoints);
    ctx.await("the watcher's snapshot", Duration.ofSeconds(30), () -> watcher.json().has("snapshot"));
    f.awaitWarm(ctx, e, n);

    Instant etcdKill = Instant.now();
    etcd.member(0).kill();
    ctx.await("E and N see etcd gone (stale)", Duration.ofSeconds(20),
        () -> Callers.firstAt(e, "stale", etcdKill).isPresent() && Callers.firstAt(n, "stale", etcdKill).isPresent());
    ChildProcess p2 = f.provider(2);
    Instant crash = Instant.now();
    p2.kill();
    p2.awaitExit(Duration.ofSeconds(10));
    ctx.sleep(WINDOW);
    Instant end = crash.plus(WINDOW);
    etcd.member(0).restart();
    Instant answering = Instant.now();
    ctx.await("the watcher drops p2 after etcd is back", Duration.ofSeconds(30),
        () -> Fleet.removedAt(watcher, "p2", answering).isPresent());
    Instant removed = Fleet.removedAt(watcher, "p2", answering).orElseThrow();

    List<JsonNode> eCalls = Fleet.calls(e, crash, end);
    List<JsonNode> nCalls = Fleet.calls(n, crash, end);
    long eFailed = Fleet.failed(eCalls);
    long nFailed = Fleet.failed(nCalls);
    long eToDead = Fleet.attemptsTo(eCalls, "p2");
    long nToDead = Fleet.attemptsTo(nCalls, "p2");
    long leasesLost = f.providers.stream()
        .filter(p -> p != p2 && Callers.firstAt(p, "lease_lost", etcdKill).isPresent()).count();

    boolean pass = !eCalls.isEmpty() && eFailed * 100 <= eCalls.size() && nFailed * 10 >= nCalls.size();
    return ScenarioResult.of(this, pass, String.format("etcd down %.1f s, p2 SIGKILLed %d ms into it; over the %d s"
            + " after the crash: N (no ejection, no retry) %d/%d failed, E (ejection + retry) %d/%d failed; attempts"
            + " to dead p2: N %d, E %d; after etcd answered the watcher dropped p2 in %d ms; leases of the 2 live"
            + " providers lost across the outage: %d",
        Fleet.millis(etcdKill, answering) / 1000.0, Fleet.millis(etcdKill, crash), WINDOW.toSeconds(), nFailed,
        nCalls.size(), eFailed, eCalls.size(), nToDead, eToDead, Fleet.millis(answering, removed), leasesLost),
        "E failures <= 1 % of its calls; N fails >= 10 % of its calls (the negative control); p2 is dropped once"
            + " etcd is back");
  }
}
