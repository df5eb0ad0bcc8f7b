package dev.muster.testing;

import dev.muster.testing.internal.ProcessReaper;
import java.util.Set;

/**
 * What this JVM started through muster-testing ({@link EtcdCluster}'s members, {@link ChildProcess}es) and what
 * of it is still alive, so a test suite can end by checking it left no process behind (see each module's
 * {@code NoLeakedProcessesIT}).
 */
public final class LeakCheck {
  private LeakCheck() {}

  /** Pids of every process this JVM started through {@link EtcdCluster} or {@link ChildProcess}, alive or not. */
  public static Set<Long> started() {
    return ProcessReaper.everStarted();
  }

  /** Pids of processes this JVM started that are still alive. */
  public static Set<Long> stillAlive() {
    return ProcessReaper.stillAlive();
  }
}
