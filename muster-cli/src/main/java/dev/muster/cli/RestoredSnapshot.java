package dev.muster.cli;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Reads a snapshot the way a restore would see it: {@code etcdctl snapshot restore} into a temporary directory, a
 * private one-member etcd started on it on free loopback ports (muster-testing's launcher, which kills it by pid),
 * and Muster's own listing of every namespace. The member and the directory are gone when {@link #count} returns
 * or throws; if the JVM is stopped meanwhile (Ctrl-C), the launcher's and {@link TempDirs}' exit hooks remove them.
 *
 * <p>The member is restored as {@code m0}, the name the launcher gives a one-member cluster's member, into the
 * directory the launcher starts that member on ({@link EtcdCluster#memberDataDir}). The peer URL stored by the
 * restore is never dialled: a single member has no peer to talk to, so the launcher may listen on other free ports.
 */
final class RestoredSnapshot {
  private static final String MEMBER = "m0";
  private static final Duration START = Duration.ofSeconds(30);

  private RestoredSnapshot() {}

  /**
   * The instances per service in {@code snapshot}, read with {@code live}'s key layout and etcd user (a snapshot of
   * a cluster with authentication keeps its users: the restored member asks for the same password).
   */
  static ServiceCounts count(Etcdctl etcdctl, Path snapshot, EtcdConfig live) {
    Path dir = TempDirs.create("muster-snapshot-verify-");
    try {
      String peerUrl = "http://127.0.0.1:" + LoopbackPorts.pick();
      etcdctl.restore(snapshot, EtcdCluster.memberDataDir(dir, 0), MEMBER, peerUrl);
      try (EtcdCluster member = EtcdCluster.builder().members(1).dataDir(dir).startTimeout(START).build().start()) {
        EtcdConfig.Builder config = EtcdConfig.builder().endpoints(member.endpoints()).layout(live.layout());
        if (live.credentials() != null) {
          config.credentials(live.credentials().user(), live.credentials().password());
        }
        try (EtcdRegistry registry = EtcdRegistry.connect(config.build())) {
          return ServiceCounts.read(registry);
        }
      }
    } finally {
      TempDirs.delete(dir);
    }
  }
}
