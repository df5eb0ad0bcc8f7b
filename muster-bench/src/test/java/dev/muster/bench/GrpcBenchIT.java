package dev.muster.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.bench.grpc.GrpcBench;
import dev.muster.bench.report.ResultTables;
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
 * The grpc section on a tiny plan against a real etcd member and real provider processes: both policies produce
 * every row (figures not judged), the report and CSV carry them, and every process is stopped.
 */
class GrpcBenchIT {
  @TempDir
  Path dir;

  @Test
  @Timeout(120)
  void musterAndRoundRobinProduceEveryRowAndTheReportShowsThemSideBySide() throws Exception {
    PrintStream progress = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    GrpcBench.Result grpc = GrpcBench.run(EndToEndIT.TINY, dir, progress);

    assertThat(grpc.failures()).isEmpty();
    for (SideResult side : List.of(grpc.muster(), grpc.roundRobin())) {
      assertThat(side.latencies().get(GrpcBench.FIRST_RPC).count()).isEqualTo(EndToEndIT.TINY.tlsSamples());
      assertThat(side.latencies().get(GrpcBench.FIRST_RPC).min()).isPositive();
      assertThat(side.values().get(GrpcBench.KILL_CALLS)).isPositive();
      assertThat(side.values()).containsKey(GrpcBench.KILL_FAILED);
    }

    ResultTables report = new ResultTables(new ResultTables.Run("test", "machine", List.of(), null, null, null,
        "", null, null, grpc.muster(), grpc.roundRobin()));
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    report.print(new PrintStream(text, true, StandardCharsets.UTF_8));
    assertThat(text.toString(StandardCharsets.UTF_8))
        .contains("5. gRPC", "register() -> first RPC, fresh channel (n=" + EndToEndIT.TINY.tlsSamples() + ")",
            "calls failed in kill -9 windows");
    Path csv = dir.resolve("results.csv");
    report.writeCsv(csv);
    assertThat(Files.readAllLines(csv).stream().filter(r -> r.startsWith("grpc,"))).hasSize(6);
    assertThat(LeakCheck.stillAlive()).isEmpty();
  }
}
