package dev.muster.chaos;

import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The faults that act on the etcd processes every schedule shares: SIGKILL and restart of a member, of the leader,
 * of a majority, and a rolling upgrade (or restart) of every member in turn. One runs at a time. A schedule that asks for one while another schedule's fault runs waits for
 * it and <em>joins</em> it (the cluster just went through a fault; a second one right behind it would only slow
 * every schedule down), so the cluster is restarted at most as often as one schedule asks.
 *
 * <p>Thread-safe. A fault holds {@code faultLock} from the kill to the healthy restart, including the asking
 * schedule's writes meanwhile: that lock exists to make faults run one at a time, and only other faults wait on it.
 * The log has its own monitor, never held across I/O.
 */
final class ClusterFaults {
  private static final Duration HEAL = Duration.ofSeconds(60);

  private final EtcdCluster cluster;
  private final Path target;
  private final long startNanos = System.nanoTime();
  private final ReentrantLock faultLock = new ReentrantLock();
  private final List<String> log = new ArrayList<>(); // guarded by itself
  private volatile long generation;
  private String lastFault = ""; // guarded by faultLock

  /** Faults on {@code cluster}; a rolling upgrade moves every member to {@code target} (the run's etcd). */
  ClusterFaults(EtcdCluster cluster, Path target) {
    this.cluster = cluster;
    this.target = target;
  }

  int members() {
    return cluster.members().size();
  }

  /**
   * SIGKILLs member {@code index}, runs {@code meanwhile} (writes the survivors can take, if any), waits {@code
   * down}, restarts it and waits for a healthy cluster. Returns what happened, for the step's outcome.
   */
  String restart(String by, int index, Duration down, Runnable meanwhile) {
    return run(by, "kill -9 " + cluster.member(index).name(), () -> {
      cluster.member(index).kill();
      meanwhile.run();
      Oracle.sleep(down);
      cluster.member(index).restart(HEAL);
      cluster.awaitHealthy(HEAL);
    });
  }

  /** SIGKILLs the leader, runs {@code meanwhile}, waits {@code down}, restarts it and waits for a healthy cluster. */
  String killLeader(String by, Duration down, Runnable meanwhile) {
    return run(by, "kill -9 the leader", () -> {
      EtcdMember leader = cluster.killLeader();
      meanwhile.run();
      Oracle.sleep(down);
      leader.restart(HEAL);
      cluster.awaitHealthy(HEAL);
    });
  }

  /** SIGKILLs a majority, waits {@code down}, brings every member back. */
  String killMajority(String by, Duration down) {
    return run(by, "kill -9 a majority", () -> {
      cluster.killMajority();
      Oracle.sleep(down);
      cluster.bringBackAll();
    });
  }

  /**
   * Each member in turn, in index order: SIGTERM, a restart from its data on the run's etcd binary, a healthy cluster
   * before the next. {@code meanwhile} (writes the other two members take) runs while the first member is down. On a
   * cluster started on an older line the first one upgrades it; later ones restart it.
   */
  String rollingUpgrade(String by, Runnable meanwhile) {
    String version = EtcdBinary.version(target).map(Object::toString).orElse(target.toString());
    boolean upgrade = cluster.members().stream().anyMatch(m -> !m.binary().equals(target));
    return run(by, (upgrade ? "rolling upgrade to " : "rolling restart on ") + version, () -> {
      boolean first = true;
      for (EtcdMember m : cluster.members()) {
        m.stop();
        if (first) {
          meanwhile.run();
          first = false;
        }
        m.restart(target, HEAL);
        cluster.awaitHealthy(HEAL);
      }
    });
  }

  /** Every fault run so far: when (seconds since the run started), what, asked by whom. */
  List<String> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  private String run(String by, String what, Runnable fault) {
    long seen = generation;
    faultLock.lock();
    try {
      if (generation != seen) {
        return "joined " + lastFault;
      }
      long at = System.nanoTime();
      try {
        fault.run();
      } catch (RuntimeException e) {
        cluster.bringBackAll(); // leave every member running for the next step, whatever went wrong
        throw e;
      } finally {
        lastFault = String.format("%s (at %.1f s, by %s)", what, (at - startNanos) / 1e9, by);
        synchronized (log) {
          log.add(lastFault);
        }
        generation++;
      }
      return what;
    } finally {
      faultLock.unlock();
    }
  }
}
