package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * etcd is SIGKILLed for 5 s and restarted on its data: consumers keep calling on their last known set, providers
 * keep their leases (etcd keeps them across restarts), and the caches resume.
 */
public final class EtcdRestartRecovery implements Scenario {
  @Override
  public String name() {
    return "etcd_restart_recovery";
  }

  @Override
  public String shows() {
    return "etcd SIGKILL for 5 s: calls go on, leases survive, caches resume";
  }

  @Override
  public String seed() {
    return "etcd kill -9 for 5 s: A 100 calls, 0 failures; leases survive; A resumes";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3).consumers(ctx, etcd.endpointsString(),
        true, false, true);
    Instant kill = Instant.now();
    etcd.member(0).kill();
    ctx.mark("etcd_sigkill", "m0");
    ctx.sleep(Duration.ofSeconds(5));
    etcd.member(0).restart();
    ctx.mark("etcd_answering", "m0 restarted");
    Instant answering = Instant.now();
    ctx.await("the watcher recovers", Duration.ofSeconds(30),
        () -> f.watcher.json().events("recovered").stream().anyMatch(n -> !JsonLog.ts(n).isBefore(kill)));
    ctx.sleep(Duration.ofSeconds(1));
    JsonNode recovered = f.watcher.json().events("recovered").stream().filter(n -> !JsonLog.ts(n).isBefore(kill))
        .findFirst().orElseThrow();
    List<JsonNode> calls = Fleet.calls(f.a, kill, answering);
    long failed = Fleet.failed(calls);
    long reregistered = f.providers.stream().filter(p -> p.json().has("reregistered")).count();
    boolean pass = failed == 0 && reregistered == 0 && Fleet.lastSet(f.watcher).size() == 3;
    return ScenarioResult.of(this, pass, String.format("A %d calls while etcd was down, %d failed; %d of 3"
            + " providers re-registered (leases kept); watcher resumed %d ms after etcd answered",
        calls.size(), failed, reregistered, Fleet.millis(answering, JsonLog.ts(recovered))),
        "A failures = 0, no re-registration, the watcher's set is complete after recovery");
  }

}
