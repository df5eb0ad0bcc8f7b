package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;

/** SIGTERM with drain 0: the provider revokes its lease; the delete reaches the watcher milliseconds later. */
public final class GracefulStopRevokesLease implements Scenario {
  @Override
  public String name() {
    return "graceful_stop_revokes_lease";
  }

  @Override
  public String shows() {
    return "SIGTERM (drain 0): revoke, and how fast the delete reaches consumers";
  }

  @Override
  public String seed() {
    return "delete reaches consumers 3 ms after revoke";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3, "--drain", "0s")
        .consumers(ctx, etcd.endpointsString(), true, false, true);
    ChildProcess p1 = f.provider(1);
    Instant term = Instant.now();
    p1.terminate();
    ctx.mark("sigterm", "p1");
    ctx.await("p1 revoked", Duration.ofSeconds(15), () -> p1.json().has("revoked"));
    JsonNode revoked = p1.json().events("revoked").get(0);
    ctx.await("the watcher drops p1", Duration.ofSeconds(15), () -> Fleet.removedAt(f.watcher, "p1", term).isPresent());
    Instant removed = Fleet.removedAt(f.watcher, "p1", term).orElseThrow();
    ctx.sleep(Duration.ofSeconds(1));
    long failed = Fleet.failed(Fleet.calls(f.a, term, Instant.now()));
    long revokeToWatcher = Duration.between(JsonLog.ts(revoked), removed).toMillis();
    boolean pass = revokeToWatcher < 1000 && failed == 0;
    return ScenarioResult.of(this, pass, String.format("SIGTERM→revoked %d ms, revoked→watcher %d ms, A failed %d",
        Fleet.millis(term, JsonLog.ts(revoked)), revokeToWatcher, failed),
        "the delete reaches the watcher within 1 s of the revoke; A failures = 0");
  }
}
