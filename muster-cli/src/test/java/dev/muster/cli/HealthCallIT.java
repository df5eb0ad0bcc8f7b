package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code muster call}'s health options end to end, on real provider processes and a real etcd: an HTTP probe
 * takes a provider that keeps its lease but answers 503 out of the picks and lets it back once it heals; with
 * {@code --max-stale} and FAIL_CLOSED a consumer refuses new calls once etcd has been unreachable that long, with
 * the error the issue names, and calls again when etcd answers. Waits on what the processes print, never for a fixed
 * time; the lab measures the same things ({@code alive_not_serving}, {@code max_stale_fail_closed}).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class HealthCallIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @TempDir
  Path dir;

  @Test
  void aProbeTakesAnAliveButFailingProviderOutAndLetsItBackWhenItHeals() throws Exception {
    String service = "health-" + UUID.randomUUID().toString().substring(0, 6);
    Path fault = dir.resolve("p1.fault");
    try (ChildProcess p1 = provider(service, "p1", "--hello-fault-file", fault.toString());
         ChildProcess p2 = provider(service, "p2")) {
      awaitRegistered(p1, p2);
      // A 2 s probe timeout: a 503 fails a probe at once, while on a loaded machine a 300 ms probe of a healthy
      // provider timed out, so p1 was already down when the fault came (two fresh-clone suite runs of 5dc8977).
      try (ChildProcess c = consumer(service, "--probe", "http:/health", "--probe-interval", "300ms",
          "--probe-timeout", "2s", "--no-eject", "--max-retries", "0")) {
        await().atMost(Duration.ofSeconds(60)).until(() -> lastOk(c, 20) && servedBy(c, "p1", Instant.MIN) > 0
            && c.json().probesSettled(Duration.ofSeconds(2), Instant.now()));

        Instant broken = Instant.now();
        Files.writeString(fault, "503");
        try {
          await("probe_down p1").atMost(Duration.ofSeconds(20))
              .until(() -> event(c, "probe_down", "p1", broken) != null);
        } catch (ConditionTimeoutException e) {
          throw new AssertionError("no probe_down of p1 within 20 s of its 503; the consumer's lines since: "
              + linesSince(c, broken) + "; its stderr: " + c.stderrTail(), e);
        }
        JsonNode down = event(c, "probe_down", "p1", broken);
        assertThat(down.path("detail").asText()).contains("http GET /health expecting 200").contains("503");
        Instant downAt = Instant.parse(down.path("ts").asText());
        // After the verdict, no new call goes to p1: wait for a few calls, then count (a call picked just before
        // the verdict may still be in flight when it is printed, so start a second after it).
        Instant settled = downAt.plusSeconds(1);
        await().atMost(Duration.ofSeconds(20)).until(() -> callsAfter(c, settled) >= 20);
        assertThat(attemptsAt(c, "p1", settled)).as("attempts at p1 after its probe_down").isZero();
        assertThat(failedFrom(c, settled)).as("failed calls after p1's probe_down").isEmpty();

        Instant healed = Instant.now();
        Files.delete(fault);
        await("probe_up p1").atMost(Duration.ofSeconds(20)).until(() -> event(c, "probe_up", "p1", healed) != null);
        await("p1 called again").atMost(Duration.ofSeconds(20)).until(() -> servedBy(c, "p1", healed) > 0);
        System.out.printf("[health IT] p1 503 -> probe_down %d ms; healed -> probe_up %d ms%n",
            Duration.between(broken, downAt).toMillis(),
            Duration.between(healed, Instant.parse(event(c, "probe_up", "p1", healed).path("ts").asText()))
                .toMillis());
      }
    }
  }

  @Test
  void failClosedRefusesNewCallsOnceEtcdHasBeenDownLongerThanMaxStaleAndCallsAgainWhenItAnswers() throws Exception {
    String service = "stale-" + UUID.randomUUID().toString().substring(0, 6);
    try (ChildProcess p1 = provider(service, "p1")) {
      awaitRegistered(p1);
      try (ChildProcess c = consumer(service, "--max-stale", "3s", "--stale-policy", "FAIL_CLOSED")) {
        await().atMost(Duration.ofSeconds(60)).until(() -> lastOk(c, 10));
        Instant killed = Instant.now();
        etcd.member(0).kill();
        try {
          await("stale").atMost(Duration.ofSeconds(30)).until(() -> event(c, "stale", null, killed) != null);
          await("max_stale_reached").atMost(Duration.ofSeconds(30))
              .until(() -> event(c, "max_stale_reached", null, killed) != null);
          Instant staleAt = Instant.parse(event(c, "stale", null, killed).path("ts").asText());
          Instant reached = Instant.parse(event(c, "max_stale_reached", null, killed).path("ts").asText());
          assertThat(Duration.between(staleAt, reached)).as("stale -> max_stale_reached")
              .isBetween(Duration.ofMillis(2500), Duration.ofSeconds(10));
          Instant refusing = reached.plusMillis(500);
          await().atMost(Duration.ofSeconds(20)).until(() -> callsAfter(c, refusing) >= 5);
          List<JsonNode> refused = callsFrom(c, refusing);
          assertThat(refused).allSatisfy(n -> {
            assertThat(n.path("ok").asBoolean()).isFalse();
            assertThat(n.path("error").asText()).containsPattern("registry unreachable for \\d+ s, over maxStale 3 s");
          });
          assertThat(failedBetween(c, killed, staleAt.plusMillis(2000))).as("calls failed before maxStale").isEmpty();
        } finally {
          etcd.member(0).restart();
        }
        Instant back = Instant.now();
        await("max_stale_cleared").atMost(Duration.ofSeconds(60))
            .until(() -> event(c, "max_stale_cleared", null, killed) != null);
        await("ok again").atMost(Duration.ofSeconds(30)).until(() -> lastOk(c, 10));
        System.out.printf("[health IT] etcd back -> max_stale_cleared %d ms%n", Duration.between(back,
            Instant.parse(event(c, "max_stale_cleared", null, killed).path("ts").asText())).toMillis());
      }
    }
  }

  private static ChildProcess provider(String service, String id, String... extra) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    List<String> args = new ArrayList<>(List.of("register", "--service", service, "--id", id, "--address",
        "127.0.0.1:" + port, "--serve-hello", "--ttl", "3s", "--keepalive", "1s", "--drain", "0s", "--endpoints",
        etcd.endpointsString()));
    args.addAll(List.of(extra));
    return MusterJar.start(args.toArray(String[]::new));
  }

  private static void awaitRegistered(ChildProcess... providers) {
    for (ChildProcess p : providers) {
      await().atMost(Duration.ofSeconds(30)).until(() -> p.json().eventNames().contains("registered"));
    }
  }

  private static ChildProcess consumer(String service, String... extra) {
    // Neither test is about attempt timeouts, so a slow answer must not count as a failure: with 500 ms a call to the
    // live p1 timed out while etcd was down in a fresh-clone suite run of 52586da, and again beside muster-cli's and
    // muster-etcd's tests (load 16 on 2 cores), where other calls took 399-499 ms; at 5 s, 0 of 8 runs failed there.
    List<String> args = new ArrayList<>(List.of("call", service, "/hello", "--count", "0", "--interval", "50ms",
        "--attempt-timeout", "5s", "--policy", "ROUND_ROBIN", "--json", "--endpoints", etcd.endpointsString()));
    args.addAll(List.of(extra));
    return MusterJar.start(args.toArray(String[]::new));
  }

  private static List<JsonNode> calls(ChildProcess p) {
    return p.json().lines().stream().filter(n -> n.path("event").asText().equals("call")).toList();
  }

  private static List<JsonNode> callsFrom(ChildProcess p, Instant t) {
    return calls(p).stream().filter(n -> !Instant.parse(n.path("ts").asText()).isBefore(t)).toList();
  }

  private static long callsAfter(ChildProcess p, Instant t) {
    return callsFrom(p, t).size();
  }

  /** The failed calls from {@code t} on, whole (error, attempts, latency), so that a failure names them. */
  private static List<JsonNode> failedFrom(ChildProcess p, Instant t) {
    return callsFrom(p, t).stream().filter(n -> !n.path("ok").asBoolean()).toList();
  }

  private static List<JsonNode> failedBetween(ChildProcess p, Instant from, Instant to) {
    return failedFrom(p, from).stream().filter(n -> Instant.parse(n.path("ts").asText()).isBefore(to)).toList();
  }

  private static long attemptsAt(ChildProcess p, String id, Instant t) {
    long n = 0;
    for (JsonNode call : callsFrom(p, t)) {
      for (JsonNode a : call.path("attempts")) {
        n += a.asText().equals(id) ? 1 : 0;
      }
    }
    return n;
  }

  /** Calls from {@code t} on that succeeded at {@code id} (the last attempt of an ok call served it). */
  private static long servedBy(ChildProcess p, String id, Instant t) {
    return calls(p).stream().filter(n -> n.path("ok").asBoolean())
        .filter(n -> t == Instant.MIN || !Instant.parse(n.path("ts").asText()).isBefore(t))
        .filter(n -> {
          JsonNode a = n.path("attempts");
          return a.size() > 0 && a.get(a.size() - 1).asText().equals(id);
        }).count();
  }

  private static boolean lastOk(ChildProcess p, int n) {
    List<JsonNode> lines = calls(p);
    return lines.size() >= n && lines.subList(lines.size() - n, lines.size()).stream()
        .allMatch(l -> l.path("ok").asBoolean());
  }

  /**
   * Whether {@code p}'s probes have settled, as the lab waits before its faults: no instance's last probe verdict is
   * probe_down, and no probe or panic event in the last 2 s.
   */
  /** What {@code p} printed from {@code t} on: its events whole, its calls as id, ok and latency (ms). */
  private static List<String> linesSince(ChildProcess p, Instant t) {
    return p.json().lines().stream().filter(n -> !Instant.parse(n.path("ts").asText("1970-01-01T00:00:00Z")).isBefore(t))
        .map(n -> n.path("event").asText().equals("call")
            ? "call " + n.path("attempts") + " " + n.path("ok").asBoolean() + " " + n.path("latency_us").asLong() / 1000
            : n.toString())
        .toList();
  }

  /** The first {@code event} line at or after {@code after} (about {@code instance}, when not null). */
  private static JsonNode event(ChildProcess p, String event, String instance, Instant after) {
    return p.json().lines().stream().filter(n -> n.path("event").asText().equals(event))
        .filter(n -> instance == null || n.path("instance").asText().equals(instance))
        .filter(n -> !Instant.parse(n.path("ts").asText()).isBefore(after)).findFirst().orElse(null);
  }
}
