package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.grpc.echo.Echo;
import dev.muster.retry.RetryConfig;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A channel on {@code muster:///SERVICE} (the muster policy and the retry interceptor) against real
 * {@code muster grpc-serve} processes and a real etcd: calls spread over every server; a SIGKILLed server and a
 * SIGTERMed one cost no idempotent call; a new server gets calls; etcd SIGKILLed for 10 s changes nothing for the
 * calls; a stream to a draining server finishes and the next one goes elsewhere. Every process is killed by pid.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class GrpcFleetIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final String service = "echo-" + UUID.randomUUID().toString().substring(0, 8);
  private final List<ChildProcess> servers = new ArrayList<>();
  private EtcdRegistry registry;
  private ManagedChannel channel;
  private Channel calls;

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (registry != null) {
      registry.close();
    }
    servers.forEach(ChildProcess::close);
  }

  @SuppressWarnings("deprecation") // nameResolverFactory: one channel, its own resolver
  private void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    channel = ManagedChannelBuilder.forTarget("muster:///" + service)
        .nameResolverFactory(MusterNameResolverProvider.of(registry)).usePlaintext().build();
    // Attempts of 5 s: the slow call (1.5 s) must finish on the server it started on, not time out and move.
    calls = ClientInterceptors.intercept(channel, MusterRetryInterceptor.create(RetryConfig.defaults().toBuilder()
        .attemptTimeout(Duration.ofSeconds(5)).build()));
  }

  private ChildProcess serve(String id, String... more) {
    List<String> args = new ArrayList<>(List.of("grpc-serve", "--endpoints", etcd.endpointsString(), "--service",
        service, "--id", id, "--ttl", "3s", "--drain", "1s"));
    args.addAll(List.of(more));
    ChildProcess p = MusterJar.start(args.toArray(String[]::new));
    servers.add(p);
    await(id + " serving").atMost(Duration.ofSeconds(40))
        .until(() -> p.json().eventNames().contains("serving") || !p.isAlive());
    assertThat(p.json().eventNames()).as("%s", p).contains("serving");
    return p;
  }

  private String say(long delayMs) {
    JsonNode reply = ClientCalls.blockingUnaryCall(calls, Echo.SAY,
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), Echo.say("hi", delayMs));
    return reply.get("served_by").asText();
  }

  /** {@code n} calls every {@code everyMs}; the servers that answered, by count, and the failures. */
  private record Run(Map<String, Integer> servedBy, List<Throwable> failures) {}

  private Run run(int n, long everyMs, Runnable atHalf) throws InterruptedException {
    Map<String, Integer> served = new ConcurrentHashMap<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      if (i == n / 2) {
        atHalf.run();
      }
      ClientCalls.asyncUnaryCall(calls.newCall(Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(10,
          TimeUnit.SECONDS)), Echo.say("hi", 20), new StreamObserver<>() {
            @Override
            public void onNext(JsonNode reply) {
              served.merge(reply.get("served_by").asText(), 1, Integer::sum);
            }

            @Override
            public void onError(Throwable t) {
              failures.add(t);
              done.countDown();
            }

            @Override
            public void onCompleted() {
              done.countDown();
            }
          });
      Thread.sleep(everyMs);
    }
    assertThat(done.await(60, TimeUnit.SECONDS)).as("every call ended").isTrue();
    return new Run(served, failures);
  }

  @Test
  void callsSpreadRideThroughSigkillAndSigtermAndReachANewServer() throws Exception {
    serve("g1");
    ChildProcess g2 = serve("g2");
    ChildProcess g3 = serve("g3", "--weight", "300");
    connect();
    await("all three answer").atMost(Duration.ofSeconds(20)).until(() -> {
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (int i = 0; i < 30; i++) {
        seen.add(say(0));
      }
      return seen.size() == 3;
    });
    Run spread = run(200, 5, () -> { });
    System.out.println("[grpc fleet IT] spread (weights 100/100/300): " + spread.servedBy());
    assertThat(spread.failures()).isEmpty();
    assertThat(spread.servedBy().get("g3")).as("g3 weighs three times as much")
        .isGreaterThan(spread.servedBy().get("g1")).isGreaterThan(spread.servedBy().get("g2"));

    Run killed = run(200, 10, g2::kill);
    System.out.println("[grpc fleet IT] g2 SIGKILLed half-way: " + killed.servedBy() + ", failed "
        + killed.failures().size());
    assertThat(killed.failures()).as("idempotent calls across a SIGKILL").isEmpty();

    // g3 gets a slow call in flight, then SIGTERM: the call finishes, later calls go to g1.
    var slow = ClientCalls.futureUnaryCall(calls.newCall(Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(20,
        TimeUnit.SECONDS)), Echo.say("slow", 1_500));
    Run terminated = run(200, 10, g3::terminate);
    System.out.println("[grpc fleet IT] g3 SIGTERMed half-way: " + terminated.servedBy() + ", failed "
        + terminated.failures().size());
    assertThat(terminated.failures()).as("calls across a SIGTERM").isEmpty();
    assertThat(slow.get(20, TimeUnit.SECONDS).get("text").asText()).isEqualTo("slow");
    assertThat(g3.exitCode(Duration.ofSeconds(30))).as("%s", g3).isZero();

    long registered = System.nanoTime();
    serve("g4");
    await("g4 gets calls").atMost(Duration.ofSeconds(10)).until(() -> "g4".equals(say(0)) || "g4".equals(say(0)));
    System.out.println("[grpc fleet IT] g4 answered " + (System.nanoTime() - registered) / 1_000_000
        + " ms after grpc-serve started (JVM start included)");
  }

  @Test
  void withEtcdDownForTenSecondsCallsGoOnOnTheLastSet() throws Exception {
    serve("g1");
    serve("g2");
    connect();
    await("both answer").atMost(Duration.ofSeconds(20)).until(() -> {
      java.util.Set<String> seen = new java.util.HashSet<>();
      for (int i = 0; i < 20; i++) {
        seen.add(say(0));
      }
      return seen.size() == 2;
    });
    etcd.member(0).kill();
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    AtomicInteger ok = new AtomicInteger();
    List<Throwable> failures = new ArrayList<>();
    while (System.nanoTime() < end) {
      try {
        say(0);
        ok.incrementAndGet();
      } catch (RuntimeException e) {
        failures.add(e);
      }
      Thread.sleep(50);
    }
    etcd.bringBackAll();
    System.out.println("[grpc fleet IT] etcd down 10 s: " + ok.get() + " ok, " + failures.size() + " failed");
    assertThat(failures).isEmpty();
    assertThat(ok.get()).isGreaterThan(50);
  }

  private static final int STREAMED = 100;

  @Test
  void aStreamToADrainingServerFinishesAndTheNextStreamGoesElsewhere() throws Exception {
    ChildProcess g1 = serve("g1", "--shutdown-deadline", "30s"); // room for what is left of the stream
    connect();
    await("g1 answers").atMost(Duration.ofSeconds(20)).until(() -> "g1".equals(say(0)));
    List<JsonNode> got = new CopyOnWriteArrayList<>();
    CountDownLatch finished = new CountDownLatch(1);
    List<Throwable> error = new CopyOnWriteArrayList<>();
    // 100 messages 150 ms apart: 15 s, long enough to be running still when g2 has started and g1 gets its SIGTERM
    // even on a loaded machine (with 30 messages, a run that took 5 s to start g2 sent the SIGTERM after the end).
    ClientCalls.asyncServerStreamingCall(calls.newCall(Echo.STREAM, CallOptions.DEFAULT.withDeadlineAfter(60,
        TimeUnit.SECONDS)), Echo.stream(STREAMED, 150), new StreamObserver<>() {
          @Override
          public void onNext(JsonNode value) {
            got.add(value);
          }

          @Override
          public void onError(Throwable t) {
            error.add(t);
            finished.countDown();
          }

          @Override
          public void onCompleted() {
            finished.countDown();
          }
        });
    await("the stream started").atMost(Duration.ofSeconds(10)).until(() -> !got.isEmpty());
    serve("g2");
    await("g2 in the set").atMost(Duration.ofSeconds(20)).until(() -> "g2".equals(say(0)));
    int before = got.size();
    g1.terminate(); // SIGTERM while the stream is still running on g1
    assertThat(before).as("the premise: the stream was still running at the SIGTERM").isLessThan(STREAMED);

    assertThat(finished.await(60, TimeUnit.SECONDS)).isTrue();
    assertThat(error).as("the stream to the draining server finished").isEmpty();
    assertThat(got).hasSize(STREAMED).allSatisfy(m -> assertThat(m.get("served_by").asText()).isEqualTo("g1"));
    List<JsonNode> next = new ArrayList<>();
    ClientCalls.blockingServerStreamingCall(calls, Echo.STREAM, CallOptions.DEFAULT.withDeadlineAfter(30,
        TimeUnit.SECONDS), Echo.stream(3, 10)).forEachRemaining(next::add);
    assertThat(next).as("the next stream").allSatisfy(m -> assertThat(m.get("served_by").asText()).isEqualTo("g2"));
    assertThat(g1.exitCode(Duration.ofSeconds(30))).as("%s", g1).isZero();
  }
}
