package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.conformance.XdsCallers.Call;
import dev.muster.conformance.XdsCallers.Caller;
import dev.muster.grpc.echo.Echo;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import dev.muster.xds.XdsBootstrap;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster xds} with the two xDS clients nobody here wrote — grpc-java's and Node's — calling real
 * {@code muster grpc-serve} providers through {@code xds:///SERVICE}, side by side in every scenario of issue 36:
 * a new provider, a SIGKILLed one, a SIGTERMed (draining) one, weights 1:3, zone failover and back, etcd SIGKILLed
 * for 10 s, and the xds server restarted. Behaviour is asserted here; how fast each happens is the lab's to measure
 * ({@code xds_*} scenarios). Every process is stopped by pid, whatever the test did.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class XdsConformanceIT {
  private static final List<String> CLIENTS = List.of("grpc-java", "node");
  private static final Duration TTL = Duration.ofSeconds(3); // the providers' lease (Providers: --ttl 3s)

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final String namespace = "x" + Long.toHexString(System.nanoTime() & 0xffffff);
  private final Path dir = TempDirs.create("muster-xds-conformance-");
  private final List<AutoCloseable> closing = new ArrayList<>();
  private Providers providers;
  private XdsProcess xds;

  @AfterEach
  void close() throws Exception {
    try {
      if (xds != null && xds.process != null) {
        assertThat(xds.process.stderr()).as("a response a client refused (NACK), as muster xds logs it")
            .noneMatch(line -> line.contains("refused its"));
      }
    } finally {
      for (int i = closing.size() - 1; i >= 0; i--) {
        closing.get(i).close();
      }
    }
  }

  /** {@code muster xds} as a process on a fixed port (a restart comes back on it). */
  private final class XdsProcess implements AutoCloseable {
    final int port = LoopbackPorts.pick();
    ChildProcess process;

    void start() {
      List<String> flags = new ArrayList<>(Providers.JVM_FLAGS);
      flags.add("-DMUSTER_LOG_LEVEL=debug"); // every request and response, for a failure's message
      process = ChildProcess.start("xds-" + namespace, ChildProcess.javaCommand(flags, List.of(
          "-jar", System.getProperty("muster.jar"), "xds", "--listen", "127.0.0.1:" + port, "--endpoints",
          etcd.endpointsString(), "--namespace", namespace, "--trust-key", providers.publicKeyFile().toString())));
      await("muster xds serving").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
          .until(() -> process.json().eventNames().contains("serving") || !process.isAlive());
      assertThat(process.isAlive()).as("muster xds ended: %s", process.stderrTail()).isTrue();
    }

    String bootstrap(String zone) {
      XdsBootstrap b = XdsBootstrap.of("127.0.0.1:" + port).withNodeId("conformance-" + namespace);
      return (zone == null ? b : b.withZone(zone)).toJson();
    }

    @Override
    public void close() {
      if (process != null) {
        process.close();
      }
    }
  }

  /** Providers of {@code service} and {@code muster xds}, started. */
  private void fleet(String service) {
    providers = new Providers(etcd.endpointsString(), namespace, service, dir);
    closing.add(providers);
    xds = new XdsProcess();
    closing.add(xds);
  }

  /** Both clients calling {@code service}, every {@code intervalMs}, from a client in {@code zone} (null: none). */
  private List<Caller> callers(String service, String zone, long intervalMs) {
    List<Caller> out = new ArrayList<>();
    for (String kind : CLIENTS) {
      Caller c = XdsCallers.start(kind, service, xds.bootstrap(zone), intervalMs);
      closing.add(c);
      out.add(c);
    }
    return out;
  }

  private static Map<String, Long> servedBy(List<Call> calls) {
    return calls.stream().filter(Call::ok).collect(Collectors.groupingBy(Call::servedBy, Collectors.counting()));
  }

  private static List<Call> failed(List<Call> calls) {
    return calls.stream().filter(c -> !c.ok()).toList();
  }

  private void awaitReached(List<Caller> callers, String id, Duration limit) {
    long from = System.currentTimeMillis();
    for (Caller c : callers) {
      try {
        await(c.name() + " reaches " + id).atMost(limit).pollInterval(Duration.ofMillis(50))
            .until(() -> servedBy(c.since(from)).containsKey(id));
        System.out.printf("%s reached %s in %d ms%n", c.name(), id, System.currentTimeMillis() - from);
      } catch (ConditionTimeoutException e) {
        throw new AssertionError(c.name() + " did not reach " + id + " within " + limit + " (from "
            + clock(from) + ")" + what(c.since(from)) + "\n" + c.state() + "\n" + id + " said:\n"
            + String.join("\n", providers.get(id).process().stdout()) + "\nmuster xds said:\n"
            + String.join("\n", xds.process.stderr()), e);
      }
    }
  }

  /** What a client's calls came to, for a failure's message: who served, and the failures. */
  private static String what(List<Call> calls) {
    StringBuilder b = new StringBuilder(": " + calls.size() + " calls, served by " + servedBy(calls));
    if (!calls.isEmpty()) {
      b.append(", the first at ").append(clock(calls.get(0).at())).append(", the last at ")
          .append(clock(calls.get(calls.size() - 1).at()));
    }
    failed(calls).stream().limit(5).forEach(f -> b.append("\n  failed at ").append(clock(f.at())).append(": code ")
        .append(f.code()).append(' ').append(f.error()));
    return b.toString();
  }

  private static String clock(long epochMillis) {
    return java.time.Instant.ofEpochMilli(epochMillis).toString();
  }

  private static void sleep(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }

  @Test
  void aNewProviderIsCalledAndAKilledOneIsNotAfterItsLeaseExpires() throws Exception {
    fleet("xnew");
    providers.start("a", false);
    xds.start();
    List<Caller> callers = callers("xnew", null, 20);
    awaitReached(callers, "a", Duration.ofSeconds(30));

    providers.start("b", false);
    awaitReached(callers, "b", Duration.ofSeconds(10));

    providers.get("b").kill();
    long killed = System.currentTimeMillis();
    sleep(TTL.plusSeconds(3));
    long after = killed + TTL.plusSeconds(1).toMillis();
    for (Caller c : callers) {
      List<Call> late = c.since(after);
      assertThat(late).as("%s calls after b's lease expired + 1 s", c.name()).isNotEmpty();
      assertThat(failed(late)).as("%s: no call reaches b (and fails) after its lease expired + 1 s", c.name())
          .isEmpty();
      assertThat(servedBy(late)).as(c.name()).containsOnlyKeys("a");
    }
  }

  @Test
  void aDrainingProviderTakesNoNewCallsAndFinishesTheOnesInFlight() throws Exception {
    fleet("xdrain");
    providers.start("a", false);
    providers.start("b", false);
    xds.start();
    List<Caller> callers = callers("xdrain", null, 20);
    awaitReached(callers, "a", Duration.ofSeconds(30));
    awaitReached(callers, "b", Duration.ofSeconds(10));
    ManagedChannel slow = null;
    for (Caller c : callers) {
      if (c instanceof XdsCallers.JavaCaller) {
        slow = Grpc.newChannelBuilder("xds:///xdrain", InsecureChannelCredentials.create()).build(); // same client
      }
    }
    closing.add(slow::shutdownNow);
    ManagedChannel ch = slow;
    // a new channel picks among its READY connections only: until both are up, every call may go to one (a suite
    // once saw all 8 slow calls on a, none on b)
    java.util.Set<String> warmed = new java.util.HashSet<>();
    await("the slow calls' channel reaches a and b").atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(20))
        .until(() -> {
          warmed.add(ClientCalls.blockingUnaryCall(ch, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(2,
              TimeUnit.SECONDS), Echo.say("warm", 0)).path("served_by").asText());
          return warmed.containsAll(List.of("a", "b"));
        });
    List<CompletableFuture<JsonNode>> inFlight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      inFlight.add(CompletableFuture.supplyAsync(() -> ClientCalls.blockingUnaryCall(ch, Echo.SAY,
          CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS), Echo.say("slow", 3000))));
    }
    sleep(Duration.ofMillis(500)); // they are in flight on both providers

    long term = System.currentTimeMillis();
    providers.get("b").drain(); // SIGTERM: DRAINING for 60 s, then GOAWAY and the revoke

    List<String> slowServedBy = inFlight.stream().map(f -> f.join().path("served_by").asText()).toList();
    assertThat(slowServedBy).as("the calls in flight at the SIGTERM all finished, b's too").contains("b");
    sleep(Duration.ofSeconds(2));
    long drained = System.currentTimeMillis();
    sleep(Duration.ofSeconds(3));
    for (Caller c : callers) {
      assertThat(failed(c.since(term))).as("%s: no call failed around the drain", c.name()).isEmpty();
      assertThat(servedBy(c.since(drained))).as("%s: no new call to draining b", c.name()).containsOnlyKeys("a");
    }
  }

  @Test
  void weightsOneToThreeSplitTheCallsOneToThree() throws Exception {
    fleet("xweight");
    providers.start("light", false, List.of("--weight", "100"));
    providers.start("heavy", false, List.of("--weight", "300"));
    xds.start();
    List<Caller> callers = callers("xweight", null, 1);
    awaitReached(callers, "light", Duration.ofSeconds(30));
    awaitReached(callers, "heavy", Duration.ofSeconds(10));
    long from = System.currentTimeMillis();

    // 180 s for 2,000 calls, not 60: a clean-clone suite of d6e727a ran this test at a load average of 22.6, and
    // grpc-java's caller had not made its 2,000 within 60 s. How long they take is not the question; a caller that
    // stopped calling fails with its count and its threads.
    for (Caller c : callers) {
      try {
        await(c.name() + " 2,000 calls").atMost(Duration.ofSeconds(180)).pollInterval(Duration.ofMillis(200))
            .until(() -> c.since(from).size() >= 2000);
      } catch (ConditionTimeoutException e) {
        throw new AssertionError(c.name() + " made fewer than 2,000 calls in 180 s (from " + clock(from) + ")"
            + what(c.since(from)) + "\n" + c.state(), e);
      }
    }

    for (Caller c : callers) {
      List<Call> calls = c.since(from).subList(0, 2000);
      Map<String, Long> by = servedBy(calls);
      assertThat(failed(calls)).as(c.name()).isEmpty();
      assertThat(by.getOrDefault("heavy", 0L) / 2000.0).as("%s: heavy's share of 2,000 calls, %s", c.name(), by)
          .isBetween(0.75 * 0.9, 0.75 * 1.1);
    }
  }

  @Test
  void aClientCallsItsOwnZoneFailsOverWhenItsInstancesDieAndComesBack() throws Exception {
    fleet("xzone");
    providers.start("here", false, List.of("--zone", "z1"));
    providers.start("there", false, List.of("--zone", "z2"));
    xds.start();
    List<Caller> callers = callers("xzone", "z1", 20);
    awaitReached(callers, "here", Duration.ofSeconds(30));
    long settled = System.currentTimeMillis();
    sleep(Duration.ofSeconds(1));
    for (Caller c : callers) {
      assertThat(servedBy(c.since(settled))).as("%s in z1", c.name()).containsOnlyKeys("here");
    }

    providers.get("here").kill();
    awaitReached(callers, "there", Duration.ofSeconds(15));

    providers.start("back", false, List.of("--zone", "z1"));
    awaitReached(callers, "back", Duration.ofSeconds(15));
    long returned = System.currentTimeMillis();
    sleep(Duration.ofSeconds(1));
    for (Caller c : callers) {
      assertThat(servedBy(c.since(returned))).as("%s back in z1", c.name()).containsOnlyKeys("back");
    }
  }

  @Test
  void etcdKilledForTenSecondsCostsNoCall() throws Exception {
    fleet("xetcd");
    providers.start("a", false);
    providers.start("b", false);
    xds.start();
    List<Caller> callers = callers("xetcd", null, 20);
    awaitReached(callers, "a", Duration.ofSeconds(30));
    awaitReached(callers, "b", Duration.ofSeconds(10));

    long down = System.currentTimeMillis();
    etcd.member(0).kill();
    sleep(Duration.ofSeconds(10));
    etcd.member(0).restart();
    sleep(Duration.ofSeconds(5));

    for (Caller c : callers) {
      List<Call> calls = c.since(down);
      assertThat(calls).as(c.name()).hasSizeGreaterThan(100);
      assertThat(failed(calls)).as("%s: calls that failed while etcd was down and after", c.name()).isEmpty();
      assertThat(servedBy(calls)).as(c.name()).containsKeys("a", "b");
    }
  }

  @Test
  void theXdsServerRestartsWhileClientsKeepCallingAndTheyReconnect() throws Exception {
    fleet("xrestart");
    providers.start("a", false);
    xds.start();
    List<Caller> callers = callers("xrestart", null, 20);
    awaitReached(callers, "a", Duration.ofSeconds(30));

    long restart = System.currentTimeMillis();
    xds.process.terminate();
    assertThat(xds.process.awaitExit(Duration.ofSeconds(20))).isTrue();
    xds.process.close();
    sleep(Duration.ofSeconds(2));
    xds.start();
    providers.start("b", false);
    awaitReached(callers, "b", Duration.ofSeconds(30)); // only a client that reconnected hears of b

    for (Caller c : callers) {
      assertThat(failed(c.since(restart))).as("%s: calls that failed across the restart", c.name()).isEmpty();
    }
  }
}
