package dev.muster.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class OutputTableTest {
  @Test
  void writesOneBlockPerScenarioWithTheSplitAsWritten() {
    StaleWindow split = StaleWindow.split(2368, 2270);
    LabRun run = new LabRun("2026-11-29T22:26:21Z", LabParams.seed(), List.of(new ScenarioResult("kill9_stale_window",
        true, Figures.withWindows("window = lease remainder + detection/delivery: " + split + " ms", List.of(split)),
        "A failures = 0", "window 2823 ms", Duration.ofMillis(18_600))));

    assertThat(OutputTable.render(run)).isEqualTo("""
        Muster lab, 2026-11-29T22:26:21Z
        parameters: TTL 3s, keepalive 1s, a call every 50ms, attempt timeout 300ms, ejection 2s, 1 retry
        1 of 1 scenarios passed

        kill9_stale_window  PASS   18.6s  ours: window = lease remainder + detection/delivery: 2368 = 2270 + 98 ms
                                         seed: window 2823 ms
                                    invariant: A failures = 0
        """);
    assertThat(StaleWindow.unsplit(2328)).hasToString("2328");
  }
}
