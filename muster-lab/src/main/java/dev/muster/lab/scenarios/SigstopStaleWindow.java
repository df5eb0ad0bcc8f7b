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
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A provider frozen with SIGSTOP keeps its address in every set until its lease expires: the stale window. B
 * (no ejection, no retry) fails the calls that land on it; A does not. Three rounds, one provider each. A call of
 * A whose last attempt timed out on a provider that serves met the machine's load, not the routing: it is named in
 * the figures and not judged (as in {@code shared_dependency_blip}).
 */
public final class SigstopStaleWindow implements Scenario {
  private static final int ROUNDS = 3;

  @Override
  public String name() {
    return "sigstop_stale_window";
  }

  @Override
  public String shows() {
    return "SIGSTOP a provider (3 rounds): window until consumers drop it; A vs B failures";
  }

  @Override
  public String seed() {
    return "window 2892-3221 ms = lease remaining + 0.22-0.49 s; B 6-7 failures, A 0";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    Fleet f = Fleet.providers(ctx, "hello", etcd.endpointsString(), 3).consumers(ctx, etcd.endpointsString(),
        true, true, true);
    List<Long> windows = new ArrayList<>();
    List<StaleWindow> staleWindows = new ArrayList<>();
    List<Long> aFailed = new ArrayList<>();
    List<Long> bFailed = new ArrayList<>();
    List<Long> aLoad = new ArrayList<>();
    StringBuilder aNamed = new StringBuilder();
    for (int round = 1; round <= ROUNDS; round++) {
      ChildProcess p = f.provider(round);
      Instant stop = Instant.now();
      p.pause();
      ctx.mark("sigstop", p.name());
      ctx.await("the watcher drops " + p.name(), Duration.ofSeconds(20),
          () -> Fleet.removedAt(f.watcher, p.name(), stop).isPresent());
      Instant removed = Fleet.removedAt(f.watcher, p.name(), stop).orElseThrow();
      ctx.sleep(Duration.ofMillis(500)); // calls started in the window finish
      windows.add(Fleet.millis(stop, removed));
      staleWindows.add(Fleet.window(p, stop, removed, ctx.params().ttl()));
      List<JsonNode> aCalls = Fleet.calls(f.a, stop, removed);
      List<JsonNode> bCalls = Fleet.calls(f.b, stop, removed);
      aFailed.add(Fleet.failedExceptLoadOnServing(aCalls, Set.of(p.name())));
      aLoad.add(Fleet.failed(aCalls) - aFailed.get(round - 1));
      aNamed.append(Fleet.failures(aCalls));
      bFailed.add(Fleet.failed(bCalls));
      p.resume();
      ctx.mark("sigcont", p.name());
      ctx.await(p.name() + " registered again", Duration.ofSeconds(20), () -> p.json().has("reregistered"));
      ctx.note(String.format("round %d (%s): window %d ms, A failed %d of %d (and %d on a serving provider's"
          + " load), B failed %d of %d", round, p.name(), windows.get(round - 1), aFailed.get(round - 1),
          aCalls.size(), aLoad.get(round - 1), bFailed.get(round - 1), bCalls.size()));
      ctx.sleep(Duration.ofSeconds(1));
    }
    boolean pass = aFailed.stream().allMatch(x -> x == 0) && bFailed.stream().anyMatch(x -> x > 0);
    return ScenarioResult.of(this, pass, Figures.withWindows(String.format("window %s ms; B failures %s, A %s;"
        + " window = lease remainder + detection/delivery: %s ms; A's calls that failed on a serving provider"
        + " (the machine's load, named, not judged) %s%s", windows, bFailed, aFailed, staleWindows, aLoad, aNamed),
        staleWindows), "A failures = 0 in every window (a call that also failed on a provider that serves met the"
        + " machine's load: named, not judged); B fails in the window (the negative control)");
  }
}
