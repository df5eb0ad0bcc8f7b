package dev.muster.testing;

import dev.muster.testing.internal.ProcessReaper;
import dev.muster.testing.internal.ProcessRecord;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * Whether a test suite left a process behind. Two views:
 * <ul>
 *   <li>this JVM's: what it started through muster-testing ({@link EtcdCluster}'s members, {@link ChildProcess}es)
 *       and what of that is still alive ({@link #started()}, {@link #stillAlive()});</li>
 *   <li>the module's ({@link #assertNoProcessLeft()}): the build runs a module's test classes in several JVMs side by
 *       side, each writing down what it started and what its shutdown hook had to kill; each module's
 *       {@code NoLeakedProcessesIT} runs after they have all ended, in a JVM of its own, and reads that record.</li>
 * </ul>
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

  /**
   * Fails unless the module's test JVMs started processes (so the check is not vacuous), none of them was left for a
   * JVM's shutdown hook to kill (the test that started it never stopped it), and none is alive now (a JVM killed
   * before its hook ran). The record's directory is the system property {@value ProcessRecord#PROPERTY}, which the
   * build sets; without it this fails, naming the property.
   */
  public static void assertNoProcessLeft() {
    String dir = System.getProperty(ProcessRecord.PROPERTY);
    if (dir == null || dir.isBlank()) {
      throw new AssertionError("no process record: the build sets -D" + ProcessRecord.PROPERTY + "=DIR for every"
          + " test JVM (the parent POM's failsafe configuration); run the module's tests through Maven");
    }
    Path record = Path.of(dir);
    List<ProcessRecord.Entry> started = ProcessRecord.started(record);
    if (started.isEmpty()) {
      throw new AssertionError("the module's tests wrote down no process in " + record + ": the check would prove"
          + " nothing (did its integration tests run?)");
    }
    List<ProcessRecord.Entry> leaked = ProcessRecord.leaked(record);
    if (!leaked.isEmpty()) {
      throw new AssertionError(leaked.size() + " process(es) of the " + started.size() + " the tests started were"
          + " still alive when their JVM exited and were killed by its shutdown hook: " + leaked);
    }
    List<ProcessRecord.Entry> alive = started.stream().filter(ProcessRecord.Entry::alive).toList();
    if (!alive.isEmpty()) {
      throw new AssertionError(alive.size() + " process(es) the tests started are still alive: " + alive);
    }
  }
}
