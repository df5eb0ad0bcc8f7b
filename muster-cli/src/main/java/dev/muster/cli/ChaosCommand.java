package dev.muster.cli;

import dev.muster.chaos.Chaos;
import dev.muster.chaos.ChaosConfig;
import dev.muster.chaos.SeedsFile;
import dev.muster.sign.SigningKey;
import java.io.PrintStream;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code muster chaos}: seeded random fault schedules on private etcd processes, invariants checked after every
 * step (see {@link Chaos}). Exit 0 when no schedule diverged, 1 when one did, 2 for bad options.
 */
@Command(
    name = "chaos",
    description = {"Run seeded random fault schedules against private etcd processes and check, after every step,"
        + " that every cache equals etcd, every published set was etcd's state at its revision, no id is held"
        + " twice, duplicates never overwrite a holder, and a provider that lost its lease is back within the bound.",
        "A schedule that diverges is written to DIR/failures.txt with its seed, its steps and the shortest"
            + " prefix that still fails when replayed alone."})
final class ChaosCommand implements Callable<Integer> {
  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Mixin
  EtcdBinaryOptions etcdBinary;

  @Option(names = "--upgrade-from", paramLabel = "FILE",
      description = "Start the 3-member cluster on this older etcd binary (e.g. 3.4.23's): the first rolling-upgrade"
          + " step moves every member to --etcd-bin's etcd, under the schedules' load.")
  Path upgradeFrom;

  @Option(names = "--schedules", paramLabel = "N", defaultValue = "100",
      description = "How many schedules (default ${DEFAULT-VALUE}).")
  int schedules;

  @Option(names = "--seed", paramLabel = "S",
      description = "The first schedule's seed; the others follow from it (default: a new random seed, printed)."
          + " --seed S --schedules 1 replays the schedule whose seed is S.")
  Long seed;

  @Option(names = "--steps", paramLabel = "K", defaultValue = "20",
      description = "Steps per schedule (default ${DEFAULT-VALUE}).")
  int steps;

  @Option(names = "--members", paramLabel = "1|3", defaultValue = "1",
      description = "etcd members (default ${DEFAULT-VALUE}); 3 adds leader kills and majority loss.")
  int members;

  @Option(names = "--parallel", paramLabel = "P",
      description = "Schedules side by side on the shared etcd (default 12 on 1 member, 8 on 3).")
  Integer parallel;

  @Option(names = "--bound", paramLabel = "D", defaultValue = "60s", converter = DurationConverter.class,
      description = "How long a cache may take to catch up, or a registration to come back, before it counts as a"
          + " divergence (default ${DEFAULT-VALUE}).")
  Duration bound;

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "chaos-out",
      description = "Where failures.txt, summary.txt and caches.log (every cache's log from INFO up: breaks, resyncs,"
          + " audit differences) go (default ${DEFAULT-VALUE}).")
  Path out;

  @Option(names = "--seeds-file", paramLabel = "FILE",
      description = "Run exactly the 'chaos' seeds for --members listed in FILE (e.g. chaos-seeds.txt, CI's fixed"
          + " set) instead of --schedules from --seed.")
  Path seedsFile;

  @Option(names = "--no-minimize", description = "Do not replay a diverged schedule's prefixes alone.")
  boolean noMinimize;

  @Option(names = "--negative-control",
      description = "Caches resume \"from now\" (the lab's negative control): the checker must find divergences.")
  boolean negativeControl;

  @Option(names = "--sign", description = "Sign every record the run writes (registrations and raw writes) with a"
      + " key made for the run, and have every cache trust only it: the checker then also proves that signed records"
      + " verify, keep their order and never go missing through the faults.")
  boolean sign;

  @Override
  public Integer call() {
    long first = seed != null ? seed : new SecureRandom().nextLong();
    int side = parallel != null ? parallel : members == 3 ? 8 : 12;
    List<Long> seeds = seedsFile == null ? List.of() : SeedsFile.read(seedsFile, "chaos", members);
    if (seedsFile != null && seeds.isEmpty()) {
      throw new Errors.UsageException(seedsFile + " lists no 'chaos' seeds for " + members + " member(s): add lines"
          + " like 'chaos " + members + " 42'");
    }
    ChaosConfig config = new ChaosConfig(schedules, first, seeds, steps, members, side, bound, out,
        !noMinimize, negativeControl, upgradeFrom == null ? null
            : EtcdBinaryOptions.checked(upgradeFrom, "--upgrade-from"), sign ? SigningKey.generate() : null);
    CacheWarnings.keepIn(out.resolve("caches.log"));
    Chaos.Outcome outcome = new Chaos(config, new PrintStream(System.out, true)).run();
    return outcome.passed() ? 0 : Errors.FAILURE;
  }
}
