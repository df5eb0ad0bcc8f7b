package dev.muster.chaos;

/**
 * What a step of a schedule does. Each operation has a weight for one-member and for three-member clusters: the
 * chance a generated step is that operation. Operations on the cluster itself (restart, leader kill, majority loss,
 * compaction) hit every schedule running side by side on it.
 */
enum Op {
  /** Puts and deletes of plain keys, each its own revision. */
  WRITES(28, 26),
  /** Puts and deletes of distinct keys in one transaction: one revision. */
  TXN(16, 14),
  /** A lease granted, keys put under it, and left to expire. */
  LEASE(10, 8),
  /** A registration through Muster's registrar (through the schedule's proxies). */
  REGISTER(12, 10),
  /** A registration closed (drain, revoke). */
  DEREGISTER(6, 5),
  /** A registration's weight changed on its lease. */
  UPDATE(6, 5),
  /** A second registration of an id someone holds: must be refused, the holder untouched. */
  DUPLICATE(6, 5),
  /** The proxies close every connection and refuse new ones for a while; writes meanwhile. */
  CUT(20, 16),
  /** The proxies hold every byte for a while (half-open connections); long enough to expire leases. */
  BLACKHOLE(8, 6),
  /** The proxies delay every chunk; writes meanwhile. */
  LATENCY(10, 8),
  /** Compaction at the current revision. */
  COMPACT(10, 8),
  /** The shape of etcd 18089: while cut, a DELETE (alone, then a put, or in a transaction), compacted at it. */
  DELETE_COMPACT(14, 12),
  /** SIGKILL of an etcd member, then a restart on the same data. */
  RESTART(2, 2),
  /** SIGKILL of the leader (three members); writes go to the survivors; it is restarted. */
  LEADER_KILL(0, 4),
  /** SIGKILL of two of three members: no quorum until they are restarted. */
  MAJORITY_LOSS(0, 2),
  /**
   * Each member in turn SIGTERMed and restarted from its data on the run's etcd (three members): a rolling upgrade
   * when the run started on an older line ({@code --upgrade-from}), a rolling restart after that. Last, with weight 0
   * for one member, so the one-member schedules of every seed are what they were before it existed.
   */
  ROLLING_UPGRADE(0, 1);

  private final int weightOneMember;
  private final int weightThreeMembers;

  Op(int weightOneMember, int weightThreeMembers) {
    this.weightOneMember = weightOneMember;
    this.weightThreeMembers = weightThreeMembers;
  }

  int weight(int members) {
    return members == 1 ? weightOneMember : weightThreeMembers;
  }

  /** Whether the operation acts on the shared cluster, and so on every schedule running. */
  boolean global() {
    return this == RESTART || this == LEADER_KILL || this == MAJORITY_LOSS || this == ROLLING_UPGRADE;
  }

  String label() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }
}
