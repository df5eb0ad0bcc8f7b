package dev.muster.bench.etcd;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.testing.EtcdCluster;
import java.io.PrintStream;
import java.nio.file.Path;

/**
 * Muster end to end against a private etcd process (one member on loopback, started and stopped by pid here),
 * with the raw-jetcd floor measured in the same run. A step that fails is noted in the results and the others
 * still run.
 *
 * <p>Runs on the calling thread.
 */
public final class EtcdBench {
  /** Muster's figures and the floor's, under the same metric names. */
  public record Result(SideResult muster, SideResult floor) {}

  private EtcdBench() {}

  public static Result run(Plan plan, Path dir, PrintStream progress) {
    SideResult muster = new SideResult();
    SideResult floor = new SideResult();
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start()) {
      String endpoints = etcd.endpointsString();
      progress.println("etcd: started a private member at " + endpoints);
      step(muster, "register/close", () -> new VisibleBench(endpoints, plan, progress).run(muster, floor));
      step(muster, "kill -9", () -> new KillBench(endpoints, plan, dir, progress).run(muster, floor));
      step(muster, "10k instances", () -> new BulkBench(endpoints, plan, progress).run(muster, floor));
      step(muster, "calls through kill -9", () -> new CallerBench(endpoints, plan, dir, progress).run(muster));
    }
    return new Result(muster, floor);
  }

  private static void step(SideResult result, String name, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      result.failed(name, e.getMessage());
    }
  }
}
