package dev.muster.chaos;

import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@code muster chaos}: a schedule-driven checker (Jepsen's idea, at our scale). It starts private etcd processes,
 * runs {@link ChaosConfig#count()} seeded {@link Schedule}s side by side on them, checks the invariants of
 * {@link QuietPoint} after every step, prints a line per schedule, and on a divergence writes the seed, the steps
 * and the shortest prefix that still fails when replayed alone to {@code failures.txt}.
 *
 * <p>Not thread-safe: {@link #run} is called once; it runs the schedules on its own pool.
 */
public final class Chaos {
  private final ChaosConfig config;
  private final PrintStream out;
  private final Tally tally = new Tally();

  /** The outcome: how many schedules and steps ran, how many diverged (details in {@code failures.txt}). */
  public record Outcome(int schedules, long steps, int divergences, Duration took) {
    public boolean passed() {
      return divergences == 0;
    }
  }

  public Chaos(ChaosConfig config, PrintStream out) {
    this.config = config;
    this.out = out;
  }

  public Outcome run() {
    long start = System.nanoTime();
    Path target = EtcdBinary.locate();
    EtcdCluster.Builder cluster = EtcdCluster.builder().members(config.members());
    if (config.upgradeFrom() != null) {
      cluster.binary(config.upgradeFrom());
    }
    try (EtcdCluster etcd = cluster.build().start();
         Oracle oracle = new Oracle(etcd.endpoints(), config.bound())) {
      ClusterFaults faults = new ClusterFaults(etcd, target);
      List<URI> urls = etcd.members().stream().map(EtcdMember::clientUrl).toList();
      out.printf("muster chaos: %d schedule(s) of %d steps on %d etcd member(s) (%s), %d side by side; seed %d%n",
          config.count(), config.steps(), config.members(), etcd.endpointsString(), config.parallel(), config.seed());
      out.printf("muster chaos: etcd %s%s%n", versionOf(target), config.upgradeFrom() == null ? ""
          : ", the cluster started on " + versionOf(config.upgradeFrom()) + " (the first rolling-upgrade step moves"
              + " it)");
      if (config.signingKey() != null) {
        out.printf("muster chaos: every record signed by key %s; every cache trusts only it%n",
            config.signingKey().keyId());
      }
      List<ScheduleRun.Result> failures = runAll(oracle, faults, urls, start);
      List<String> minimized = new ArrayList<>();
      for (ScheduleRun.Result f : failures) {
        minimized.add(config.minimize() ? minimize(f, oracle, faults, urls) : "not minimized (--no-minimize)");
      }
      Outcome outcome = new Outcome(config.count(), tally.get("steps"), failures.size(),
          Duration.ofNanos(System.nanoTime() - start));
      ChaosReport report = new ChaosReport(config, outcome, tally, versionOf(target),
          config.upgradeFrom() == null ? null : versionOf(config.upgradeFrom()));
      report.writeFailures(failures, minimized, faults.log());
      report.summary().forEach(out::println);
      report.writeSummary();
      return outcome;
    }
  }

  private static String versionOf(Path binary) {
    return EtcdBinary.version(binary).map(Object::toString).orElse("? (" + binary + ")");
  }

  private List<ScheduleRun.Result> runAll(Oracle oracle, ClusterFaults faults, List<URI> urls, long start) {
    ExecutorService pool = Executors.newFixedThreadPool(config.parallel(), r -> {
      Thread t = new Thread(r, "muster-chaos-schedule");
      t.setDaemon(true);
      return t;
    });
    ExecutorCompletionService<ScheduleRun.Result> done = new ExecutorCompletionService<>(pool);
    List<Long> seeds = config.scheduleSeeds();
    for (int i = 0; i < seeds.size(); i++) {
      Schedule schedule = Schedule.generate(i, seeds.get(i), config.members(), config.steps());
      String namespace = "c" + i + "-" + shortHex(seeds.get(i));
      done.submit(() -> new ScheduleRun(schedule, namespace, oracle, faults, tally, config).run(urls));
    }
    List<ScheduleRun.Result> failures = new ArrayList<>();
    try {
      for (int finished = 1; finished <= seeds.size(); finished++) {
        ScheduleRun.Result r = done.take().get();
        if (r.diverged()) {
          failures.add(r);
        }
        out.println(ChaosReport.progress(finished, seeds.size(), r, failures.size(),
            Duration.ofNanos(System.nanoTime() - start)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while schedules ran", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a schedule crashed: " + e.getCause(), e.getCause());
    } finally {
      pool.shutdownNow();
    }
    failures.sort((a, b) -> Integer.compare(a.schedule().index(), b.schedule().index()));
    return failures;
  }

  /** Up to 8 hex digits of a seed, for namespaces (DNS labels of at most 63 characters). */
  private static String shortHex(long seed) {
    String hex = Long.toHexString(seed);
    return hex.substring(0, Math.min(8, hex.length()));
  }

  /**
   * Replays the failed schedule's prefixes alone, shortest first, up to the step that failed; returns the first
   * length that fails again, or says none did (the failure then needed the timing of the side-by-side run).
   */
  private String minimize(ScheduleRun.Result failed, Oracle oracle, ClusterFaults faults, List<URI> urls) {
    Schedule s = failed.schedule();
    for (int length = 1; length <= failed.failedStep() + 1; length++) {
      Schedule prefix = s.prefix(length);
      String namespace = "m" + s.index() + "-" + length + "-" + shortHex(s.seed());
      ScheduleRun.Result r = new ScheduleRun(prefix, namespace, oracle, faults, new Tally(), config).run(urls);
      out.printf("  replaying schedule %d alone: the first %d step(s) %s%n", s.index(), length,
          r.diverged() ? "fail: " + r.failure() : "pass");
      if (r.diverged()) {
        return "the first " + length + " step(s) fail alone: " + r.failure();
      }
    }
    return "no prefix up to step " + failed.failedStep() + " failed when replayed alone: the divergence needed the"
        + " timing of the side-by-side run (the full step list and the cluster faults above are the evidence)";
  }
}
