package dev.muster.testing;

import dev.muster.testing.internal.ProcessReaper;
import java.util.Set;

/**
 * What this JVM's launcher started and what of it is still alive, so a test suite can end by checking it left
 * no etcd process behind (see each module's {@code NoLeakedProcessesIT}).
 */
public final class LeakCheck {
  private LeakCheck() {}

  /** Pids of every etcd process this JVM started through {@link EtcdCluster}, alive or not. */
  public static Set<Long> started() {
    return ProcessReaper.everStarted();
  }

  /** Pids of processes this JVM started that are still alive. */
  public static Set<Long> stillAlive() {
    return ProcessReaper.stillAlive();
  }
}
