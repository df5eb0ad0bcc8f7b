package dev.muster.bench.curator;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.SideResult;
import dev.muster.testing.internal.ProcessReaper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Runs only the Curator side, for checking it on its own, and prints its figures: {@code java -cp
 * muster-bench/target/muster-bench.jar dev.muster.bench.curator.CuratorBenchMain [--full]} (the quick plan unless
 * {@code --full}). Child logs go to a temporary directory that is deleted at exit unless {@code --keep} is given.
 * The side-by-side table with Muster is printed by the bench command, not here.
 */
public final class CuratorBenchMain {
  private CuratorBenchMain() {}

  public static void main(String[] args) throws Exception {
    boolean full = java.util.Arrays.asList(args).contains("--full");
    boolean keep = java.util.Arrays.asList(args).contains("--keep");
    Path dir = Files.createTempDirectory("muster-bench-curator-");
    if (!keep) {
      ProcessReaper.trackTempDir(dir);
    }
    long start = System.nanoTime();
    SideResult result = CuratorBench.run(full ? Plan.full(System.nanoTime()) : Plan.quick(System.nanoTime()), dir,
        System.out);
    double seconds = (System.nanoTime() - start) / 1e9;

    System.out.println();
    System.out.printf("%-22s %6s %10s %10s %10s%n", "metric (ms)", "count", "p50", "p99", "max");
    for (Map.Entry<String, Samples> e : result.latencies().entrySet()) {
      Samples s = e.getValue();
      System.out.printf("%-22s %6d %10.1f %10.1f %10.1f%n", e.getKey(), s.count(), s.p50(), s.p99(), s.max());
    }
    System.out.println();
    for (Map.Entry<String, Double> e : result.values().entrySet()) {
      System.out.printf("%-22s %,12.1f%n", e.getKey(), e.getValue());
    }
    System.out.println();
    result.notes().forEach(n -> System.out.println("note: " + n));
    System.out.printf("%ncurator side took %.1f s%s%n", seconds, keep ? "; logs in " + dir : "");
  }
}
