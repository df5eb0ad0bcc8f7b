package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.EtcdBinary;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lab's rolling_upgrade through the jar: 3 members on 3.4.23 moved to 3.5 one at a time, then restarted one at
 * a time, while A and B call; it passes only with no failed call of A, no lease lost and every cache equal to etcd
 * after all six steps.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class LabUpgradeIT {
  @Test
  void aRollingUpgradeUnderLoadPasses(@TempDir Path out) throws Exception {
    String from = EtcdBinary.locateOld().flatMap(EtcdBinary::version).orElseThrow().toString();
    String to = EtcdBinary.runningVersion().toString();
    String table = LabSubset.run(out, List.of("rolling_upgrade"));
    assertThat(table).containsPattern("rolling_upgrade +PASS .*" + from.replace(".", "\\.") + " -> "
        + to.replace(".", "\\.") + ".*A 0 failed of \\d+ calls.*0 lease\\(s\\) lost, 0 re-registration\\(s\\)"
        + ".*every cache equal to etcd after all 6 steps");
  }
}
