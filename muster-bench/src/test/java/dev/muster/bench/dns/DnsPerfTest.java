package dev.muster.bench.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.muster.bench.support.BenchException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DnsPerf#parse} on output captured from dnsperf 2.10.0 (verbose), against the gateway and a closed port. */
class DnsPerfTest {
  @TempDir
  Path tmp;

  @Test
  void readsTheSummaryAndOneLatencyPerAnswerLine() throws IOException {
    Path kept = tmp.resolve("kept.out");
    DnsPerf.Output o = DnsPerf.parse(resource("dnsperf-gateway.out"), kept);
    assertThat(o.sent()).isEqualTo(8);
    assertThat(o.completed()).isEqualTo(8);
    assertThat(o.lost()).isZero();
    assertThat(o.qps()).isEqualTo(4744.958482);
    assertThat(o.runSeconds()).isEqualTo(0.001686);
    assertThat(o.avgMs()).isCloseTo(0.185, within(1e-9));
    assertThat(o.minMs()).isCloseTo(0.104, within(1e-9));
    assertThat(o.maxMs()).isCloseTo(0.608, within(1e-9));
    assertThat(o.rcodes()).containsExactly(Map.entry("NOERROR", 6L), Map.entry("NXDOMAIN", 1L),
        Map.entry("REFUSED", 1L));
    assertThat(o.requestBytes()).isEqualTo(53);
    assertThat(o.responseBytes()).isEqualTo(164);
    assertThat(o.timedOut()).isZero();
    // eight answers: 608, 138, 131, 104, 130, 118, 149, 108 microseconds
    assertThat(o.latenciesMicros().getTotalCount()).isEqualTo(8);
    assertThat(o.percentileMs(50)).isCloseTo(0.130, within(0.001));
    assertThat(o.percentileMs(99)).isCloseTo(0.608, within(0.001));
    assertThat(o.percentileMs(100)).isCloseTo(o.maxMs(), within(0.001));
    List<String> log = Files.readAllLines(kept);
    assertThat(log).noneMatch(l -> l.startsWith("> ")).contains("Statistics:")
        .anyMatch(l -> l.contains("Queries per second:   4744.958482"));
  }

  @Test
  void countsTimedOutQueriesWithoutALatency() throws IOException {
    DnsPerf.Output o = DnsPerf.parse(resource("dnsperf-timeouts.out"), null);
    assertThat(o.sent()).isEqualTo(2);
    assertThat(o.completed()).isZero();
    assertThat(o.lost()).isEqualTo(2);
    assertThat(o.timedOut()).isEqualTo(2);
    assertThat(o.rcodes()).isEmpty();
    assertThat(o.latenciesMicros().getTotalCount()).isZero();
    assertThat(o.percentileMs(99)).isNaN();
  }

  @Test
  void outputWithoutTheSummarySaysWhatIsMissing() {
    String cut = "DNS Performance Testing Tool\nVersion 2.10.0\n\n> NOERROR a.example. A 0.000515\n";
    assertThatThrownBy(() -> DnsPerf.parse(new BufferedReader(new StringReader(cut)), null))
        .isInstanceOf(BenchException.class).hasMessageContaining("Average Latency (s)");
  }

  @Test
  void findsAnExecutableDnsperfOnlyWhereThereIsOne() throws IOException {
    Path empty = Files.createDirectory(tmp.resolve("empty"));
    Path bin = Files.createDirectory(tmp.resolve("bin"));
    Path dnsperf = Files.writeString(bin.resolve("dnsperf"), "#!/bin/sh\n");
    assertThat(DnsPerf.find(List.of(empty))).isEmpty();
    assertThat(DnsPerf.find(List.of(empty, bin))).isEmpty(); // not executable yet
    assertThat(dnsperf.toFile().setExecutable(true)).isTrue();
    assertThat(DnsPerf.find(List.of(empty, bin))).contains(dnsperf);
    assertThat(DnsPerf.INSTALL).contains("apt-get install -y dnsperf");
  }

  private static BufferedReader resource(String name) {
    return new BufferedReader(new InputStreamReader(DnsPerfTest.class.getResourceAsStream("/dns/" + name),
        StandardCharsets.UTF_8));
  }
}
