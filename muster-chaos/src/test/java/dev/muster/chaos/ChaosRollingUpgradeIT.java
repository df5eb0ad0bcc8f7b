package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.EtcdBinary;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rolling upgrade as a chaos operation: three members started on the older line (3.4.23), and seed 226, whose
 * first step upgrades them one at a time to the run's etcd (3.5) and whose fifth restarts them one at a time on it,
 * with cuts, compactions and registrations around them. Every invariant holds after every step.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class ChaosRollingUpgradeIT {
  private static final long UPGRADE_AT_STEP_0 = 226;

  @Test
  void aClusterUpgradedUnderTheSchedulesKeepsEveryInvariant(@TempDir Path out) throws Exception {
    Path old = EtcdBinary.locateOld().orElseThrow(() -> new AssertionError("no etcd 3.4 to start on: run"
        + " './muster etcd-install 3.4' or set " + EtcdBinary.OLD_ENV));
    assertThat(Schedule.generate(0, UPGRADE_AT_STEP_0, 3, 20).steps().get(0).op()).isEqualTo(Op.ROLLING_UPGRADE);

    String printed = FixedSeeds.run(List.of(UPGRADE_AT_STEP_0), 3, 1, old, out);

    assertThat(printed).contains("the cluster started on " + EtcdBinary.version(old).orElseThrow());
    assertThat(printed).contains("rolling upgrades 2");
  }
}
