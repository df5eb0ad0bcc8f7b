package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three provider processes ({@code register --serve-hello}, TTL 3 s) and two consumer processes calling every
 * 50 ms with a 300 ms attempt timeout: A with ejection (after 1 failure, 2 s) and one retry, B with neither.
 * One provider is SIGSTOPped (attempts time out), later another is SIGKILLed (connections refused); each stays in
 * the consumers' sets until its lease expires — the stale window. The test waits on what the consumers print (their
 * caches' set lines), never for a fixed time. Each window is judged against the provider down in it: a failed call
 * of A's that also tried a provider serving at the time met the machine's load there and is printed, not judged
 * ({@link Fleet#failedExceptLoadOnServing}).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class CallCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void ejectionAndRetryHideTheStaleWindowWhileAConsumerWithoutThemSeesFailures() throws Exception {
    String service = "hello-" + UUID.randomUUID().toString().substring(0, 6);
    String endpoints = etcd.endpointsString();
    List<ChildProcess> providers = new ArrayList<>();
    List<String> ids = List.of("p1", "p2", "p3");
    try (ChildProcess p1 = provider(service, "p1", endpoints);
         ChildProcess p2 = provider(service, "p2", endpoints);
         ChildProcess p3 = provider(service, "p3", endpoints)) {
      providers.addAll(List.of(p1, p2, p3));
      for (ChildProcess p : providers) {
        await().atMost(Duration.ofSeconds(30)).until(() -> p.json().eventNames().contains("registered"));
      }
      try (ChildProcess a = consumer(service, endpoints, "--idempotent", "--eject-after", "1", "--ejection-time", "2s");
           ChildProcess b = consumer(service, endpoints, "--no-eject", "--max-retries", "0")) {
        await().atMost(Duration.ofSeconds(30)).until(() -> tried(a).containsAll(ids) && tried(b).containsAll(ids));
        // Fresh JVMs on 2 cores time out some of their first 300 ms attempts (class loading, JIT): the windows
        // start once both consumers are warm, and warm-up failures are reported apart.
        await().atMost(Duration.ofSeconds(60)).until(() -> lastAllOk(a, 20) && lastAllOk(b, 20));

        Instant stopAt = Instant.now();
        p1.pause();
        // The stale window: p1's lease (3 s) runs out and both consumers' caches drop it.
        await().atMost(Duration.ofSeconds(30)).until(() -> dropped(a, "p1", stopAt) && dropped(b, "p1", stopAt));
        p1.resume();
        await().atMost(Duration.ofSeconds(10)).until(() -> p1.json().eventNames().contains("reregistered"));
        Instant killAt = Instant.now();
        p2.kill();
        await().atMost(Duration.ofSeconds(30)).until(() -> dropped(a, "p2", killAt) && dropped(b, "p2", killAt));
        Instant bothDropped = Instant.now();
        // Some calls after the window, so each consumer's summary counts calls made without p2.
        await().atMost(Duration.ofSeconds(30)).until(() -> Fleet.calls(a, bothDropped, Instant.MAX).size() >= 10
            && Fleet.calls(b, bothDropped, Instant.MAX).size() >= 10);

        a.terminate();
        b.terminate();
        a.exitCode(Duration.ofSeconds(20));
        b.exitCode(Duration.ofSeconds(20));
        Instant end = Instant.now();
        long aWarmup = Fleet.failed(Fleet.calls(a, Instant.MIN, stopAt));
        long bWarmup = Fleet.failed(Fleet.calls(b, Instant.MIN, stopAt));
        // Each window judges against the one provider that is down in it: p1 from its SIGSTOP until p2's kill (it
        // is back and registered again before that), p2 from its kill on. A retry that went to a provider serving
        // at the time and failed there met the machine's load, whichever provider that was.
        List<JsonNode> aStop = Fleet.calls(a, stopAt, killAt);
        List<JsonNode> aKill = Fleet.calls(a, killAt, end);
        List<JsonNode> bStop = Fleet.calls(b, stopAt, killAt);
        List<JsonNode> bKill = Fleet.calls(b, killAt, end);
        long aFailed = Fleet.failedExceptLoadOnServing(aStop, Set.of("p1"))
            + Fleet.failedExceptLoadOnServing(aKill, Set.of("p2"));
        long bFailed = Fleet.failedExceptLoadOnServing(bStop, Set.of("p1"))
            + Fleet.failedExceptLoadOnServing(bKill, Set.of("p2"));
        long aLoad = Fleet.failed(aStop) + Fleet.failed(aKill) - aFailed;
        long bLoad = Fleet.failed(bStop) + Fleet.failed(bKill) - bFailed;
        System.out.printf("stale windows (SIGSTOP p1 at %s, SIGKILL p2 at %s): consumer A %d failed of %d (%d attempts"
                + " to the killed p2, %d retried); consumer B %d failed of %d (%d attempts to p2)%n", stopAt, killAt,
            aFailed, aStop.size() + aKill.size(), Fleet.attemptsTo(aKill, "p2"), retried(a), bFailed,
            bStop.size() + bKill.size(), Fleet.attemptsTo(bKill, "p2"));
        System.out.printf("failed on a serving provider too (the machine's load, not judged): A %d, B %d;"
            + " warm-up failures before the windows: A %d, B %d%n", aLoad, bLoad, aWarmup, bWarmup);
        assertThat(aFailed).as("caller-visible failures with ejection + retry; A's failed calls in the SIGSTOP window%s"
            + " and in the SIGKILL window%s", Fleet.failures(aStop), Fleet.failures(aKill)).isZero();
        assertThat(bFailed).as("caller-visible failures without them").isPositive();
        assertThat(summary(a).path("failed").asLong()).isEqualTo(failures(a));
      }
    }
  }

  private static ChildProcess provider(String service, String id, String endpoints) throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    return MusterJar.start("register", "--service", service, "--id", id, "--address", "127.0.0.1:" + port,
        "--serve-hello", "--ttl", "3s", "--keepalive", "1s", "--drain", "0s", "--endpoints", endpoints);
  }

  private static ChildProcess consumer(String service, String endpoints, String... extra) {
    List<String> args = new ArrayList<>(List.of("call", service, "/hello", "--count", "0", "--interval", "50ms",
        "--attempt-timeout", "300ms", "--policy", "ROUND_ROBIN", "--json", "--endpoints", endpoints));
    args.addAll(List.of(extra));
    return MusterJar.start(args.toArray(String[]::new));
  }

  private static List<JsonNode> callLines(ChildProcess p) {
    return p.json().lines().stream().filter(n -> n.path("event").asText().equals("call")).toList();
  }

  private static Set<String> tried(ChildProcess p) {
    Set<String> ids = new HashSet<>();
    callLines(p).forEach(n -> n.path("attempts").forEach(a -> ids.add(a.asText())));
    return ids;
  }

  private static long failures(ChildProcess p) {
    return callLines(p).stream().filter(n -> !n.path("ok").asBoolean()).count();
  }

  /** The last {@code n} calls to complete all succeeded. */
  private static boolean lastAllOk(ChildProcess p, int n) {
    List<JsonNode> lines = callLines(p);
    return lines.size() >= n && lines.subList(lines.size() - n, lines.size()).stream()
        .allMatch(l -> l.path("ok").asBoolean());
  }

  /** A set line of {@code p}'s cache printed at or after {@code after} without {@code id}: p stopped picking it. */
  private static boolean dropped(ChildProcess p, String id, Instant after) {
    return p.json().lines().stream()
        .filter(n -> n.has("instances") && !Instant.parse(n.path("ts").asText()).isBefore(after))
        .anyMatch(n -> {
          for (JsonNode i : n.path("instances")) {
            if (i.path("id").asText().equals(id)) {
              return false;
            }
          }
          return true;
        });
  }

  private static long retried(ChildProcess p) {
    return callLines(p).stream().filter(n -> n.path("retried").asBoolean()).count();
  }

  private static JsonNode summary(ChildProcess p) {
    return p.json().lines().stream().filter(n -> n.path("event").asText().equals("summary")).findFirst()
        .orElseThrow(() -> new AssertionError("no summary line from " + p));
  }
}
