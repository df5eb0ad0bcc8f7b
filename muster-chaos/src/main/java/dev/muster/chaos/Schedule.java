package dev.muster.chaos;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A seeded list of steps. The same seed, step count and member count always give the same steps; the seeds of a
 * run's schedules follow each other ({@link #next(long)}), so {@code --seed S --schedules 1} replays the schedule
 * whose seed is S.
 *
 * @param index the schedule's place in its run (0-based)
 * @param seed its seed
 * @param members the cluster size it was generated for (1 or 3)
 * @param steps what it does, in order
 */
record Schedule(int index, long seed, int members, List<Step> steps) {
  Schedule {
    steps = List.copyOf(steps);
  }

  /** The seed of the schedule after the one seeded {@code seed} (SplitMix64). */
  static long next(long seed) {
    long z = seed + 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The first {@code length} steps (the prefix a replay runs). */
  Schedule prefix(int length) {
    return new Schedule(index, seed, members, steps.subList(0, Math.min(length, steps.size())));
  }

  static Schedule generate(int index, long seed, int members, int length) {
    Random random = new Random(seed);
    int total = 0;
    for (Op op : Op.values()) {
      total += op.weight(members);
    }
    List<Step> steps = new ArrayList<>(length);
    for (int i = 0; i < length; i++) {
      int pick = random.nextInt(total);
      Op op = null;
      for (Op candidate : Op.values()) {
        pick -= candidate.weight(members);
        if (pick < 0) {
          op = candidate;
          break;
        }
      }
      steps.add(step(op, random, members));
    }
    return new Schedule(index, seed, members, steps);
  }

  private static Step step(Op op, Random r, int members) {
    return switch (op) {
      case WRITES -> new Step(op, 0, 0, 0, writes(r, 1 + r.nextInt(5), false));
      case TXN -> new Step(op, 0, 0, 0, writes(r, 2 + r.nextInt(3), true));
      case LEASE -> new Step(op, 0, r.nextInt(2), r.nextInt(Step.LEASE_KEYS), leaseKeys(r));
      case REGISTER, DEREGISTER, DUPLICATE -> new Step(op, 0, r.nextInt(2), r.nextInt(Step.REGISTRATIONS), List.of());
      case UPDATE -> new Step(op, 0, r.nextInt(200), r.nextInt(Step.REGISTRATIONS), List.of());
      case CUT -> new Step(op, r.nextInt(800), 0, 0, writes(r, r.nextInt(4), false));
      case BLACKHOLE -> new Step(op, 1000 + r.nextInt(2500), 0, 0, writes(r, r.nextInt(4), false));
      case LATENCY -> new Step(op, r.nextInt(200), 0, 0, writes(r, 1 + r.nextInt(3), false));
      case COMPACT -> new Step(op, 0, 0, 0, List.of());
      case DELETE_COMPACT -> new Step(op, 0, r.nextInt(3), r.nextInt(Step.KEYS), List.of());
      case RESTART -> new Step(op, 200 + r.nextInt(1300), r.nextInt(members), 0, writes(r, 1 + r.nextInt(3), false));
      case LEADER_KILL -> new Step(op, 500 + r.nextInt(1500), 0, 0, writes(r, 1 + r.nextInt(3), false));
      case MAJORITY_LOSS -> new Step(op, 500 + r.nextInt(1500), 0, 0, List.of());
      case ROLLING_UPGRADE -> new Step(op, 0, 0, 0, writes(r, 1 + r.nextInt(3), false));
    };
  }

  /** {@code count} writes; for a transaction the keys are distinct (etcd refuses a key twice in one txn). */
  private static List<Step.Write> writes(Random r, int count, boolean distinct) {
    List<Step.Write> writes = new ArrayList<>(count);
    Set<Integer> used = new HashSet<>();
    while (writes.size() < count) {
      int key = r.nextInt(Step.KEYS);
      if (distinct && !used.add(key)) {
        continue;
      }
      writes.add(new Step.Write(r.nextInt(3) == 0, key, 1 + r.nextInt(100)));
    }
    return writes;
  }

  /** The lease keys' writes: only their count matters (keys l[target]..). */
  private static List<Step.Write> leaseKeys(Random r) {
    int count = 1 + r.nextInt(3);
    List<Step.Write> writes = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      writes.add(new Step.Write(false, i, 1 + r.nextInt(100)));
    }
    return writes;
  }
}
