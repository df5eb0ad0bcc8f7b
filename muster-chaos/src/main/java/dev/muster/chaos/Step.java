package dev.muster.chaos;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One step of a schedule, with every parameter drawn when the schedule was generated, so a seed always gives the
 * same steps. What a step finds at run time (which registrations are open, which keys exist) decides some of its
 * effects; {@link ScheduleRun} reports those beside the step.
 *
 * @param op what the step does
 * @param millis how long the fault lasts (cut, black hole, latency, etcd down), 0 when it has no duration
 * @param variant which form of the operation (e.g. of {@link Op#DELETE_COMPACT}), or a member index
 * @param target the registration (r0..r5) or key the operation aims at
 * @param writes the writes the step makes (during the fault, for faults)
 */
record Step(Op op, int millis, int variant, int target, List<Write> writes) {
  /** Plain keys k0..k19; the version is fixed per key (k-even in v1, k-odd in v2) so every id has one key. */
  static final int KEYS = 20;
  /** Registration ids r0..r5. */
  static final int REGISTRATIONS = 6;
  /** Lease keys l0..l9. */
  static final int LEASE_KEYS = 10;

  /** A put (with a weight, so a put of an existing key changes its value) or a delete of key {@code k<key>}. */
  record Write(boolean delete, int key, int weight) {
    @Override
    public String toString() {
      return delete ? "del k" + key : "put k" + key + " w" + weight;
    }
  }

  Step {
    writes = List.copyOf(writes);
  }

  String describe() {
    String w = writes.isEmpty() ? "" : " [" + writes.stream().map(Write::toString).collect(Collectors.joining(", "))
        + "]";
    return switch (op) {
      case WRITES -> "writes" + w;
      case TXN -> "txn" + w;
      case LEASE -> "lease " + (2 + variant) + "s on " + writes.size() + " key(s) from l" + target;
      case REGISTER -> "register r" + target;
      case DEREGISTER -> "deregister r" + target + (variant == 0 ? " (drain 0)" : " (drain 300ms)");
      case UPDATE -> "update r" + target + " weight " + (1 + variant);
      case DUPLICATE -> "duplicate of r" + target;
      case CUT -> "cut " + millis + "ms" + w;
      case BLACKHOLE -> "blackhole " + millis + "ms" + w;
      case LATENCY -> "latency " + millis + "ms" + w;
      case COMPACT -> "compact";
      case DELETE_COMPACT -> "cut, " + switch (variant) {
        case 0 -> "delete k" + target;
        case 1 -> "delete k" + target + " then put k" + ((target + 1) % KEYS);
        default -> "txn delete k" + target + " + put k" + ((target + 1) % KEYS);
      } + ", compact at it, pass";
      case RESTART -> "etcd kill -9 member " + variant + ", down " + millis + "ms" + w;
      case LEADER_KILL -> "kill leader, down " + millis + "ms" + w;
      case MAJORITY_LOSS -> "kill majority, down " + millis + "ms";
      case ROLLING_UPGRADE -> "rolling upgrade: each member SIGTERMed and restarted from its data" + w;
    };
  }
}
