package dev.muster.lab;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.JsonLog;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which failed calls a scenario judges, and how a result names them. */
class FleetFailuresTest {
  private static final String OK = "{\"event\":\"call\",\"ts\":\"2026-12-04T12:00:00Z\",\"ok\":true,"
      + "\"attempts\":[\"p1\"],\"latency_us\":5000}";

  private static String failed(String error, String attempt, long latencyMs) {
    return "{\"event\":\"call\",\"ts\":\"2026-12-04T12:00:00Z\",\"ok\":false,\"attempts\":[" + attempt
        + "],\"latency_us\":" + latencyMs * 1000 + ",\"error\":\"" + error + "\"}";
  }

  @Test
  void timeoutsAreNotCountedAsRoutingFailuresButEverythingElseIs() {
    List<JsonNode> calls = JsonLog.parse(List.of(OK,
        failed("TimeoutException: attempt to default/hello/v1/p2 timed out after 300 ms", "\"p2\"", 301),
        failed("HttpTimeoutException: request timed out", "\"p1\"", 330),
        failed("NoEndpointException: no endpoint to call: the balancer's endpoint set is empty", "", 0),
        failed("ConnectException: Connection refused", "\"p3\"", 2))).events("call");

    assertThat(Fleet.failed(calls)).isEqualTo(4);
    assertThat(Fleet.failedOtherThanTimeout(calls)).isEqualTo(2);
  }

  @Test
  void whileAProviderIsStaleOnlyACallThatAlsoFailedOnAServingOneIsLetOff() {
    List<JsonNode> calls = JsonLog.parse(List.of(OK,
        failed("TimeoutException: attempt to default/hello/v1/p2 timed out after 300 ms", "\"p3\",\"p2\"", 601),
        failed("TimeoutException: attempt to default/hello/v1/p3 timed out after 300 ms", "\"p2\",\"p3\"", 662),
        failed("TimeoutException: attempt to default/hello/v1/p3 timed out after 300 ms", "\"p3\",\"p3\"", 601),
        failed("TimeoutException: attempt to default/hello/v1/p3 timed out after 300 ms", "\"p3\"", 301),
        failed("ConnectException: Connection refused", "\"p1\"", 2),
        failed("NoEndpointException: no endpoint to call: the balancer's endpoint set is empty", "", 0)))
        .events("call");

    assertThat(Fleet.failed(calls)).isEqualTo(6);
    assertThat(Fleet.failedExceptLoadOnServing(calls, Set.of("p3")))
        .as("all but the timeout on p2 and the retry after p2 failed").isEqualTo(4);
    assertThat(Fleet.failedExceptLoadOnServing(calls, Set.of("p2", "p3")))
        .as("with p2 stale too, every failure is the routing's").isEqualTo(6);
  }

  @Test
  void theCallsInFlightAtAKillStartedBeforeItAndEndedAfterIt() {
    List<JsonNode> calls = JsonLog.parse(List.of(
        call("2026-12-04T12:00:00.000Z", 400, true), // ended 100 ms before the kill
        call("2026-12-04T12:00:00.300Z", 500, true), // answered 300 ms after it
        call("2026-12-04T12:00:00.400Z", 150, false), // failed on the reset connection
        call("2026-12-04T12:00:00.500Z", 5, true))) // started at the kill: in the window, not in flight
        .events("call");
    Instant kill = Instant.parse("2026-12-04T12:00:00.500Z");

    assertThat(Fleet.inFlightAt(calls, kill)).hasSize(2);
    assertThat(Fleet.failed(Fleet.inFlightAt(calls, kill))).isEqualTo(1);
    assertThat(Fleet.ended(calls.get(1))).isEqualTo(Instant.parse("2026-12-04T12:00:00.800Z"));
  }

  private static String call(String ts, long latencyMs, boolean ok) {
    return "{\"event\":\"call\",\"ts\":\"" + ts + "\",\"ok\":" + ok + ",\"attempts\":[],\"latency_us\":"
        + latencyMs * 1000 + "}";
  }

  @Test
  void failuresNameEachErrorItsAttemptsAndLatencyUpToThree() {
    List<JsonNode> calls = JsonLog.parse(List.of(OK,
        failed("HttpTimeoutException: request timed out", "\"p1\"", 330),
        failed("ConnectException", "\"p2\"", 4), failed("ConnectException", "\"p3\"", 5),
        failed("ConnectException", "\"p1\"", 6), failed("ConnectException", "\"p2\"", 7))).events("call");

    assertThat(Fleet.failures(calls)).isEqualTo(" [HttpTimeoutException: request timed out via [\"p1\"] after 330 ms;"
        + " ConnectException via [\"p2\"] after 4 ms; ConnectException via [\"p3\"] after 5 ms; 2 more]");
    assertThat(Fleet.failures(JsonLog.parse(List.of(OK)).events("call"))).isEmpty();
  }
}
