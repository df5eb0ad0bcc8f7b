package dev.muster.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.bench.curator.CuratorBench;
import dev.muster.bench.etcd.EtcdBench;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.testing.LeakCheck;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's end-to-end sections on a tiny plan, against a real etcd and a real ZooKeeper with real provider
 * processes: every row is produced, no step failed, the figures are plausible (not asserted against a target:
 * benchmarks never fail on a number), the report and CSV carry them, and no started process is left alive.
 */
class EndToEndIT {
  static final Plan TINY = new Plan(List.of(1, 3), 3, 3, 2, 300, 1, 300, 1, Duration.ofSeconds(2),
      Duration.ofMillis(500), Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(1), 42);

  @TempDir
  Path dir;

  @Test
  @Timeout(300)
  void bothSidesProduceEveryRowAndTheReportCarriesThem() throws Exception {
    PrintStream progress = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    EtcdBench.Result etcd = EtcdBench.run(TINY, dir.resolve("etcd"), progress);
    SideResult curator = CuratorBench.run(TINY, dir.resolve("curator"), progress);

    assertThat(etcd.muster().notes()).noneMatch(n -> n.contains("FAILED"));
    assertThat(curator.notes()).noneMatch(n -> n.contains("FAILED"));
    for (SideResult side : List.of(etcd.muster(), etcd.floor(), curator)) {
      for (int n : TINY.cacheCounts()) {
        assertThat(side.latencies().get(Metric.visible(n)).count()).isEqualTo(TINY.visibleSamples());
        assertThat(side.latencies().get(Metric.gone(n)).count()).isEqualTo(TINY.visibleSamples());
      }
      assertThat(side.latencies().get(Metric.KILL9_GONE).count()).isEqualTo(TINY.killSamples());
      // a killed provider's instance outlives the kill by the rest of its lease / session, so never instantly
      assertThat(side.latencies().get(Metric.KILL9_GONE).p50()).isGreaterThan(100);
      assertThat(side.latencies().get(Metric.BUILD).count()).isEqualTo(TINY.bulkRepeats());
    }
    assertThat(etcd.muster().values()).containsKeys(Metric.EVENTS_PER_SECOND, Metric.HEAP_PER_INSTANCE,
        Metric.CALLS, Metric.CALLS_FAILED);
    assertThat(etcd.muster().values().get(Metric.HEAP_PER_INSTANCE)).isPositive();
    assertThat(etcd.muster().values().get(Metric.CALLS)).isPositive();
    assertThat(curator.values()).containsKeys(Metric.HEAP_PER_INSTANCE, Metric.CALLS, Metric.CALLS_FAILED);
    assertThat(etcd.muster().latencies().get(Metric.KILL9_REMAINDER).count()).isEqualTo(TINY.killSamples());

    ResultTables report = new ResultTables(new ResultTables.Run("test", "machine", List.of(), etcd.muster(),
        etcd.floor(), curator, CuratorBench.label(TINY), null, null, null, null));
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    report.print(new PrintStream(text, true, StandardCharsets.UTF_8));
    assertThat(text.toString(StandardCharsets.UTF_8))
        .contains("register() -> visible, 1 cache", "full resync", "calls failed in kill -9 windows", "Curator");
    Path csv = dir.resolve("results.csv");
    report.writeCsv(csv);
    List<String> rows = Files.readAllLines(csv);
    assertThat(rows.get(0)).startsWith("# machine: ");
    assertThat(rows.stream().filter(r -> !r.startsWith("#")))
        .allSatisfy(r -> assertThat(r.split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", -1)).hasSize(12));
    assertThat(LeakCheck.stillAlive()).isEmpty();
  }
}
