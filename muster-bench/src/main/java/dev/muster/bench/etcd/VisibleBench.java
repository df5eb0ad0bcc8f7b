package dev.muster.bench.etcd;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.etcd.EtcdConfig;
import java.io.PrintStream;
import java.util.List;

/**
 * register() → visible in N consumer caches and graceful close() → gone from all N, next to the floor measured
 * in the same run and in turns with it, a sample of one then a sample of the other ({@link FloorRig}: a raw
 * jetcd put → the event at N raw jetcd watchers, a raw revoke → the delete at all N). Measured in turns because
 * measured one after the other the floor's 100-watcher rows moved by 2× from run to run while Muster's did not
 * (docs/bench-ab-100caches.txt), so the ratio said more about the machine's moment than about Muster. Both sides
 * are connected for the whole of an N, on different keys: neither's watchers see the other's changes.
 *
 * <p>A sample is the time until the <em>last</em> of the N consumers saw the change. The time the call itself
 * took to return (register() = one put-if-absent transaction on a lease granted ahead; the floor's put = one
 * request) is recorded too, so the table shows how much of a gap is etcd round trips and how much is delivery.
 * Runs on the calling thread.
 */
final class VisibleBench {
  private final String endpoints;
  private final Plan plan;
  private final PrintStream progress;

  VisibleBench(String endpoints, Plan plan, PrintStream progress) {
    this.endpoints = endpoints;
    this.plan = plan;
    this.progress = progress;
  }

  void run(SideResult muster, SideResult floor) {
    for (int n : plan.cacheCounts()) {
      progress.printf("etcd: register()→visible / close()→gone in %d cache(s) and the floor's put→event /"
          + " revoke→delete at %d raw watcher(s), in turns, %d samples each...%n", n, n, plan.visibleSamples());
      try (FloorRig raw = new FloorRig(endpoints, "/bench-floor/n" + n + "/", n);
           VisibilityRig rig = new VisibilityRig(EtcdConfig.of(endpoints), "bench-visible-n" + n, n, plan)) {
        VisibilityRig.measureInTurns(List.of(raw, rig), List.of(floor, muster), plan.visibleSamples());
      }
    }
  }
}
