package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a member reports of etcd's own slow warnings, read from its log (lines as etcd 3.5 writes them). */
class EtcdMemberSlownessTest {
  @TempDir
  Path dir;

  @Test
  void countsSlowFsyncsAndSlowRequestsWithTheLongestEachAndOnlyThoseLoggedSinceTheLastAsk() throws Exception {
    EtcdMember m = new EtcdMember("m0", 0, 1, 2, dir, Path.of("etcd"), false);
    Path log = dir.resolve("etcd.log");
    assertThat(m.slowSinceLastAsked()).as("no log yet").isEmpty();

    Files.write(log, List.of(
        "{\"level\":\"info\",\"msg\":\"serving client traffic insecurely\"}",
        "{\"level\":\"warn\",\"caller\":\"wal/wal.go:805\",\"msg\":\"slow fdatasync\",\"took\":\"1.19s\","
            + "\"expected-duration\":\"1s\"}",
        "{\"level\":\"warn\",\"msg\":\"slow fdatasync\",\"took\":\"5.204s\",\"expected-duration\":\"1s\"}",
        "{\"level\":\"warn\",\"msg\":\"apply request took too long\",\"took\":\"157.6ms\"}",
        "{\"level\":\"warn\",\"msg\":\"leader failed to send out heartbeat on time; took too long, leader is"
            + " overloaded likely from slow disk\",\"to\":\"8e9e05c52164694d\",\"heartbeat-interval\":\"100ms\","
            + "\"expected-duration\":\"200ms\",\"exceeded-duration\":\"1.2s\"}",
        "{\"level\":\"warn\",\"msg\":\"waiting for ReadIndex response took too long, retrying\","
            + "\"sent-request-id\":7587,\"retry-timeout\":\"500ms\"}"));
    assertThat(m.slowSinceLastAsked()).isEqualTo("2 slow fdatasync (longest 5204 ms), 1 late heartbeats (longest 1200"
        + " ms), 1 ReadIndex retries (longest 500 ms), 1 took too long (longest 158 ms)");
    assertThat(m.slowSinceLastAsked()).as("nothing new").isEmpty();

    Files.write(log, List.of("{\"level\":\"warn\",\"msg\":\"apply request took too long\",\"took\":\"850µs\"}",
        "{\"level\":\"warn\",\"msg\":\"apply request took too long\"}"), StandardOpenOption.APPEND);
    assertThat(m.slowSinceLastAsked()).as("a line without a duration counts, the longest is of those with one")
        .isEqualTo("2 took too long (longest 1 ms)");
  }
}
