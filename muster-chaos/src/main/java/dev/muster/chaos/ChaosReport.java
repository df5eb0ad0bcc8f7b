package dev.muster.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@code muster chaos} prints and writes: a progress line per schedule, {@code failures.txt} (every diverged
 * schedule: seed, replay command, steps with what each found, the failed invariant, the shortest failing prefix,
 * the cluster faults of the run) and {@code summary.txt} (the totals and what was exercised).
 *
 * <p>Not thread-safe; used by the runner's thread.
 */
final class ChaosReport {
  private final ChaosConfig config;
  private final Chaos.Outcome outcome;
  private final Tally tally;
  private final String etcdVersion;
  private final String upgradedFrom;

  /** {@code upgradedFrom}: the version the cluster started on before its rolling upgrade, or null. */
  ChaosReport(ChaosConfig config, Chaos.Outcome outcome, Tally tally, String etcdVersion, String upgradedFrom) {
    this.config = config;
    this.outcome = outcome;
    this.tally = tally;
    this.etcdVersion = etcdVersion;
    this.upgradedFrom = upgradedFrom;
  }

  static String progress(int done, int total, ScheduleRun.Result r, int divergences, Duration elapsed) {
    Schedule s = r.schedule();
    String what = r.diverged()
        ? "DIVERGED at step " + r.failedStep() + " (" + s.steps().get(r.failedStep()).describe() + "): " + r.failure()
        : r.stepsRun() + " steps ok";
    int width = String.valueOf(total).length();
    return String.format("[%" + width + "d/%d] schedule %d seed %d: %s in %.1f s · divergences %d · elapsed %s",
        done, total, s.index(), s.seed(), what, r.took().toMillis() / 1000.0, divergences, clock(elapsed));
  }

  void writeFailures(List<ScheduleRun.Result> failures, List<String> minimized, List<String> clusterFaults) {
    StringBuilder b = new StringBuilder();
    if (failures.isEmpty()) {
      b.append("No divergences: ").append(outcome.schedules()).append(" schedule(s), ").append(outcome.steps())
          .append(" steps.\n");
    }
    for (int i = 0; i < failures.size(); i++) {
      ScheduleRun.Result f = failures.get(i);
      Schedule s = f.schedule();
      b.append("schedule ").append(s.index()).append(", seed ").append(s.seed()).append('\n');
      b.append("  replay: ./muster chaos --seed ").append(s.seed()).append(" --schedules 1 --steps ")
          .append(config.steps()).append(" --members ").append(config.members())
          .append(config.negativeControl() ? " --negative-control" : "").append('\n');
      b.append("  diverged at step ").append(f.failedStep()).append(": ").append(f.failure()).append('\n');
      b.append("  minimal failing prefix: ").append(minimized.get(i)).append('\n');
      b.append("  steps:\n");
      for (int k = 0; k < s.steps().size(); k++) {
        String found = k < f.outcomes().size() ? " -> " + f.outcomes().get(k) : k == f.failedStep() ? " -> (failed)"
            : k > f.failedStep() ? " (not run)" : "";
        if (k == f.failedStep()) {
          found += "   <== the invariants failed after this step";
        }
        b.append(String.format("  %4d %s%s%n", k, s.steps().get(k).describe(), found));
      }
      b.append('\n');
    }
    b.append("cluster faults of the run (they hit every schedule running):\n");
    if (clusterFaults.isEmpty()) {
      b.append("  none\n");
    }
    clusterFaults.forEach(l -> b.append("  ").append(l).append('\n'));
    write(config.out().resolve("failures.txt"), b.toString());
  }

  List<String> summary() {
    List<String> lines = new ArrayList<>();
    lines.add(String.format("muster chaos: %d schedule(s), %d steps on %d member(s) of etcd %s%s in %s: %d"
            + " divergence(s)%s", outcome.schedules(), outcome.steps(), config.members(), etcdVersion,
        upgradedFrom == null ? "" : " (upgraded from " + upgradedFrom + ")", clock(outcome.took()),
        outcome.divergences(), outcome.passed() ? "" : " (see " + config.out().resolve("failures.txt") + ")"));
    StringBuilder exercised = new StringBuilder("  exercised:");
    for (Map.Entry<String, Long> e : tally.snapshot().entrySet()) {
      if (!e.getKey().equals("steps") && !e.getKey().equals("divergences")) {
        exercised.append(' ').append(e.getKey()).append(' ').append(e.getValue()).append(',');
      }
    }
    exercised.setLength(exercised.length() - 1);
    lines.add(exercised.toString());
    return lines;
  }

  void writeSummary() {
    StringBuilder b = new StringBuilder();
    b.append(String.format("etcd %s%nupgraded from %s%nschedules %d%nsteps per schedule %d%nmembers %d%n"
            + "side by side %d%nfirst seed %d%nbound %d s%nnegative control %s%nelapsed %s%ndivergences %d%n",
        etcdVersion, upgradedFrom == null ? "-" : upgradedFrom, outcome.schedules(), config.steps(),
        config.members(), config.parallel(), config.seed(), config.bound().toSeconds(), config.negativeControl(),
        clock(outcome.took()), outcome.divergences()));
    tally.snapshot().forEach((k, v) -> b.append(k).append(' ').append(v).append('\n'));
    write(config.out().resolve("summary.txt"), b.toString());
  }

  static String clock(Duration d) {
    long s = d.toSeconds();
    return s >= 60 ? String.format("%dm%02ds", s / 60, s % 60) : String.format("%.1fs", d.toMillis() / 1000.0);
  }

  private static void write(Path file, String text) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
