package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short subset of the lab, end to end through the jar: the figures are computed and the invariants hold. The
 * subset is split over two classes ({@link LabHealthIT}) so they run side by side. The lab's rolling_upgrade is
 * not in CI (its six member restarts under load are the most CPU any one scenario takes); ChaosRollingUpgradeIT runs
 * the upgrade itself under the chaos invariants, and the committed lab runs show the scenario.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class LabIT {
  @Test
  void staleWindowsAndResumesRunEndToEndAndPass(@TempDir Path out) throws Exception {
    String table = LabSubset.run(out, List.of("sigstop_stale_window", "kill9_stale_window",
        "watch_resume_from_revision", "compaction_forces_resync"));
    assertThat(table).containsPattern("sigstop_stale_window +PASS .*window \\[\\d+, \\d+, \\d+\\] ms");
    assertThat(table).containsPattern("kill9_stale_window +PASS .*window \\d+ ms; B \\d+ failures");
    assertThat(table).contains("resync(s)");
    assertThat(out.resolve("sigstop_stale_window/consumer-a.jsonl")).isNotEmptyFile();
    assertThat(out.resolve("kill9_stale_window/watcher.jsonl")).isNotEmptyFile();
  }
}
