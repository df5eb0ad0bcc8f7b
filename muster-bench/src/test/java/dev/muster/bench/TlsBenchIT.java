package dev.muster.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.bench.etcd.TlsBench;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.SideResult;
import dev.muster.testing.LeakCheck;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The TLS-cost section on a tiny plan against a real plain member and a real mutual-TLS one: both modes produce
 * every row (figures not judged), the report and CSV carry them with the ratio, and both members are stopped and
 * the test certificates removed.
 */
class TlsBenchIT {
  @TempDir
  Path dir;

  @Test
  @Timeout(120)
  void plainAndTlsProduceEveryRowAndTheReportComparesThem() throws Exception {
    PrintStream progress = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    TlsBench.Result tls = TlsBench.run(EndToEndIT.TINY, dir, progress);

    assertThat(tls.failures()).isEmpty();
    for (SideResult mode : List.of(tls.plain(), tls.tls())) {
      for (String metric : List.of(Metric.visible(1), Metric.gone(1), Metric.visibleCall(1), Metric.goneCall(1))) {
        assertThat(mode.latencies().get(metric).count()).as(metric).isEqualTo(EndToEndIT.TINY.tlsSamples());
        assertThat(mode.latencies().get(metric).min()).as(metric).isPositive();
      }
    }

    ResultTables report = new ResultTables(new ResultTables.Run("test", "machine", List.of(), null, null, null,
        "", tls.plain(), tls.tls(), null, null));
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    report.print(new PrintStream(text, true, StandardCharsets.UTF_8));
    assertThat(text.toString(StandardCharsets.UTF_8))
        .contains("4. TLS cost", "register() -> visible, 1 cache (n=3)", "close() -> gone, 1 cache (n=3)");
    Path csv = dir.resolve("results.csv");
    report.writeCsv(csv);
    List<String> rows = Files.readAllLines(csv).stream().filter(r -> r.startsWith("tls,")).toList();
    assertThat(rows).hasSize(8).allSatisfy(r -> assertThat(fields(r)).hasSize(12));
    assertThat(rows).filteredOn(r -> fields(r)[3].equals("tls"))
        .hasSize(4).allSatisfy(r -> assertThat(fields(r)[10]).as("ratio to plain").isNotEmpty());
    try (var left = Files.list(dir)) {
      assertThat(left.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("tls-pki-"));
    }
    assertThat(LeakCheck.stillAlive()).isEmpty();
  }

  /** A CSV row's fields; a quoted field may hold commas. */
  private static String[] fields(String row) {
    return row.split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", -1);
  }
}
