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

/** A provider killed with SIGKILL stays in the sets until its lease expires; B's calls to it are refused fast. */
public final class Kill9StaleWindow implements Scenario {
  @Override
  public String name() {
    return "kill9_stale_window";
  }

  @Override
  public String shows() {
    return "SIGKILL a provider: window until consumers drop it; A vs B failures";
  }

  @Override
  public String seed() {
    return "window 2823 ms; B 19 failures (fast refusals), A 0";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3).consumers(ctx, etcd.endpointsString(),
        true, true, true);
    ChildProcess p = f.provider(2);
    Instant kill = Instant.now();
    p.kill();
    ctx.mark("sigkill", p.name());
    ctx.await("the watcher drops p2", Duration.ofSeconds(20), () -> Fleet.removedAt(f.watcher, "p2", kill).isPresent());
    Instant removed = Fleet.removedAt(f.watcher, "p2", kill).orElseThrow();
    ctx.sleep(Duration.ofMillis(500));
    List<JsonNode> a = Fleet.calls(f.a, kill, removed);
    List<JsonNode> b = Fleet.calls(f.b, kill, removed);
    long aFailed = Fleet.failed(a);
    long bFailed = Fleet.failed(b);
    boolean pass = aFailed == 0 && bFailed > 0;
    StaleWindow window = Fleet.window(p, kill, removed, ctx.params().ttl());
    return ScenarioResult.of(this, pass, Figures.withWindows(String.format("window %d ms; B %d failures of %d calls,"
            + " A %d of %d (A sent %d attempts to the dead address); window = lease remainder + detection/delivery:"
            + " %s ms", window.windowMs(), bFailed, b.size(), aFailed, a.size(), Fleet.attemptsTo(a, "p2"), window),
        List.of(window)), "A failures = 0; B fails in the window (the negative control)");
  }
}
