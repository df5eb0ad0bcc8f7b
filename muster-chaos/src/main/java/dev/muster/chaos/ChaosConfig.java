package dev.muster.chaos;

import dev.muster.InvalidInputException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@code muster chaos} runs. Immutable.
 *
 * @param schedules how many schedules (1 to 100,000)
 * @param seed the first schedule's seed; the next ones follow it ({@link Schedule#next(long)})
 * @param seeds exact schedule seeds to run instead (CI's fixed set); empty: {@code schedules} from {@code seed}
 * @param steps steps per schedule (1 to 1,000)
 * @param members etcd members: 1, or 3 (adds leader kills and majority loss)
 * @param parallel schedules run side by side on the shared etcd (1 to 64)
 * @param bound how long a quiet point waits for a cache to catch up or a registration to come back before it calls
 *     it a divergence (generous: well above anything measured)
 * @param out where {@code failures.txt} and {@code summary.txt} go
 * @param minimize replay a diverged schedule's prefixes alone to find the shortest that still fails
 * @param negativeControl caches use the lab's negative-control resume ("from now"): the checker must find
 *     divergences, which shows it can
 * @param upgradeFrom an older etcd binary (3.4.23) the cluster starts on, so that the first rolling-upgrade step
 *     moves its members to the run's etcd; null: the cluster runs the run's etcd from the start
 * @param signingKey sign every record the run writes (registrations and raw writes) with this key, and have every
 *     cache trust only it ({@code --sign}); null: records unsigned, caches check nothing
 */
public record ChaosConfig(int schedules, long seed, List<Long> seeds, int steps, int members, int parallel,
    Duration bound, Path out, boolean minimize, boolean negativeControl, Path upgradeFrom,
    dev.muster.sign.SigningKey signingKey) {

  public ChaosConfig {
    Objects.requireNonNull(seeds, "seeds");
    Objects.requireNonNull(bound, "bound");
    Objects.requireNonNull(out, "out");
    seeds = List.copyOf(seeds);
    if (seeds.isEmpty() && (schedules < 1 || schedules > 100_000)) {
      throw new InvalidInputException("schedules", schedules, "use 1 to 100000");
    }
    if (steps < 1 || steps > 1_000) {
      throw new InvalidInputException("steps", steps, "use 1 to 1000 steps per schedule");
    }
    if (members != 1 && members != 3) {
      throw new InvalidInputException("members", members, "use 1 or 3");
    }
    if (parallel < 1 || parallel > 64) {
      throw new InvalidInputException("parallel", parallel, "use 1 to 64 schedules side by side");
    }
    if (upgradeFrom != null && members != 3) {
      throw new InvalidInputException("upgrade-from", upgradeFrom, "a rolling upgrade needs --members 3 (one member"
          + " cannot be upgraded while the others serve)");
    }
    if (bound.compareTo(Duration.ofSeconds(5)) < 0) {
      throw new InvalidInputException("bound", bound, "use at least 5s: a quiet point waits this long for a"
          + " cache to catch up after etcd restarts");
    }
  }

  /** As above, the cluster on the run's etcd from the start, records unsigned. */
  public ChaosConfig(int schedules, long seed, List<Long> seeds, int steps, int members, int parallel,
      Duration bound, Path out, boolean minimize, boolean negativeControl) {
    this(schedules, seed, seeds, steps, members, parallel, bound, out, minimize, negativeControl, null, null);
  }

  /** The number of schedules this configuration runs. */
  int count() {
    return seeds.isEmpty() ? schedules : seeds.size();
  }

  /** Each schedule's seed: the explicit ones, or {@code schedules} seeds following {@code seed}. */
  List<Long> scheduleSeeds() {
    if (!seeds.isEmpty()) {
      return seeds;
    }
    List<Long> chain = new ArrayList<>(schedules);
    for (long s = seed; chain.size() < schedules; s = Schedule.next(s)) {
      chain.add(s);
    }
    return chain;
  }
}
