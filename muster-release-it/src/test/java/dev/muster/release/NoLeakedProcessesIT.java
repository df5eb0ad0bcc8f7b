package dev.muster.release;

import dev.muster.testing.LeakCheck;
import org.junit.jupiter.api.Test;

/**
 * Runs after every other test JVM of this module has ended, in one of its own (the parent POM's failsafe execution
 * {@code leak-check}), and checks the record they left: no process was left to a shutdown hook or behind.
 */
class NoLeakedProcessesIT {
  @Test
  void everyProcessTheModulesTestsStartedWasStoppedByThem() {
    LeakCheck.assertNoProcessLeft();
  }
}
