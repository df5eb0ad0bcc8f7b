package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** Three providers register; consumer A sees all three and calls each without a failure. */
public final class NormalRegisterAndWatch implements Scenario {
  @Override
  public String name() {
    return "normal_register_and_watch";
  }

  @Override
  public String shows() {
    return "3 providers register, A sees and calls all 3";
  }

  @Override
  public String seed() {
    return "3 addresses, A calls each, 0 caller failures";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3).consumers(ctx, etcd.endpointsString(),
        true, false, true);
    Instant from = Instant.now();
    ctx.sleep(Duration.ofSeconds(3));
    List<JsonNode> calls = Fleet.calls(f.a, from, Instant.now());
    Set<String> called = new TreeSet<>();
    calls.forEach(c -> c.path("attempts").forEach(a -> called.add(a.asText())));
    List<String> watched = Fleet.lastSet(f.watcher);
    long failed = Fleet.failed(calls);
    boolean pass = watched.size() == 3 && called.size() == 3 && failed == 0;
    return ScenarioResult.of(this, pass, String.format("%d addresses watched, A called %s, %d calls, %d failed",
        watched.size(), called, calls.size(), failed), "W sees 3, A calls all 3, A failures = 0");
  }
}
