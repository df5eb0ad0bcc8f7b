package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class SnapshotReportTest {
  @Test
  void equalCountsGiveOneEqualRowPerServiceAndExitZero() {
    SnapshotReport report = new SnapshotReport();
    report.compare(counts(Map.of("default/orders", 2, "blue/users", 1)),
        counts(Map.of("default/orders", 2, "blue/users", 1)));
    assertThat(report.rows()).extracting(SnapshotReport.Row::verdict).containsExactly("equal", "equal");
    assertThat(report.findings()).isEmpty();
    assertThat(report.exitCode()).isZero();
  }

  @Test
  void aServiceMissingFromTheSnapshotIsAnErrorNamingItAndSayingItPredatesThem() {
    SnapshotReport report = new SnapshotReport();
    report.compare(counts(Map.of("default/orders", 2)), counts(Map.of("default/orders", 2, "default/payments", 2)));
    assertThat(report.findings()).extracting(Object::toString).containsExactly(
        "ERROR  default/payments: 0 instances in the snapshot, 2 live — the snapshot predates them or lost them");
    assertThat(report.rows()).contains(new SnapshotReport.Row("default/payments", 0, 2));
    assertThat(report.exitCode()).isEqualTo(2);
  }

  @Test
  void aServiceOnlyInTheSnapshotAndOneWhoseCountDiffersAreErrorsToo() {
    SnapshotReport report = new SnapshotReport();
    report.compare(counts(Map.of("default/gone", 1, "default/orders", 3)), counts(Map.of("default/orders", 2)));
    assertThat(report.rows()).extracting(SnapshotReport.Row::verdict).containsExactly("missing live", "differs");
    assertThat(report.findings()).extracting(SnapshotReport.Finding::message).containsExactly(
        "default/gone: 1 instances in the snapshot, 0 live — they left since the snapshot, or the live cluster lost"
            + " them",
        "default/orders: 3 instances in the snapshot, 2 live — instances came or went since the snapshot, or one side"
            + " lost some");
  }

  @Test
  void undecodableKeysThatDifferInNumberAreAWarningAndExitOne() {
    SnapshotReport report = new SnapshotReport();
    report.compare(new ServiceCounts(5, new TreeMap<>(Map.of("a/b", 1)), List.of()),
        new ServiceCounts(6, new TreeMap<>(Map.of("a/b", 1)), List.of("/muster/a/b/v1/x: not JSON")));
    assertThat(report.findings()).extracting(Object::toString).containsExactly(
        "WARNING  0 undecodable keys in the snapshot, 1 live (muster ls lists them)");
    assertThat(report.exitCode()).isEqualTo(1);
  }

  @Test
  void theTableAlignsItsColumnsUnderTheHeader() {
    SnapshotReport report = new SnapshotReport();
    report.compare(counts(Map.of("default/orders", 2)), counts(Map.of("default/orders", 2, "default/x", 10)));
    assertThat(report.table()).containsExactly(
        "SERVICE         SNAPSHOT      LIVE  VERDICT",
        "default/orders         2         2  equal",
        "default/x              0        10  missing in snapshot");
  }

  @Test
  void withoutAComparisonThereIsNoTable() {
    assertThat(new SnapshotReport().table()).isEmpty();
  }

  private static ServiceCounts counts(Map<String, Integer> instances) {
    return new ServiceCounts(1, new TreeMap<>(instances), List.of());
  }
}
