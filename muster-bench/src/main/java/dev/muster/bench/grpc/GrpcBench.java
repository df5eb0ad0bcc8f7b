package dev.muster.bench.grpc;

import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrarConfig;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Muster's gRPC adapter next to gRPC's own policies, on one private etcd member, in two parts:
 *
 * <ol>
 *   <li><b>register → first RPC:</b> an in-JVM Netty server with {@link Echo} is started and registered, then a
 *       fresh {@code muster:///} channel is built and one SAY is timed until it answers (clock from just before
 *       {@code register()}; the channel's resolve, connect and the call are in the figure). The {@code muster}
 *       policy and {@code round_robin} (same resolver) take turns, a new service name per sample.
 *   <li><b>kill -9 window:</b> three {@link GrpcProvider} processes; two callers, each calling SAY every 10 ms
 *       on its own channel to the same fleet: the {@code muster} policy with {@link MusterRetryInterceptor}, and
 *       {@code round_robin} under {@code outlier_detection_experimental}. One provider is killed with SIGKILL
 *       (its lease stays until the TTL runs out); the calls either caller starts in the next TTL + 2 s are
 *       counted, failed ones apart. The killed one is replaced before the next round.
 * </ol>
 *
 * <p>A failure is noted in the results and the rest of the bench still runs. Runs on the calling thread (the
 * callers have their own).
 */
public final class GrpcBench {
  /** The same rows for the muster policy and for gRPC's round_robin. */
  public record Result(SideResult muster, SideResult roundRobin) {
    public List<String> failures() {
      return muster.failures();
    }
  }

  /** register() → first SAY answered through a fresh channel, ms. */
  public static final String FIRST_RPC = "grpc.first.rpc";
  /** The part of {@link #FIRST_RPC} until register() returned, ms. */
  public static final String FIRST_RPC_REGISTER = "grpc.first.rpc.register";
  /** Calls started in the kill -9 windows (a value). */
  public static final String KILL_CALLS = "grpc.kill9.calls";
  /** Of {@link #KILL_CALLS}, those that failed as the caller saw them (a value). */
  public static final String KILL_FAILED = "grpc.kill9.failed";
  /** Retries the muster interceptor made over the whole kill -9 part (a value). */
  public static final String KILL_RETRIES = "grpc.kill9.retries";

  /** Between two calls of one caller. */
  static final Duration CALL_INTERVAL = Duration.ofMillis(10);
  /** Deadline of one call (all its attempts). */
  static final Duration CALL_DEADLINE = Duration.ofSeconds(1);

  /**
   * round_robin under gRPC's outlier detection (gRFC A50), as close as its knobs go to Muster's ejection: a
   * 1 s sweep, 30 s base ejection, failure-percentage ejection from 5 requests with three hosts.
   */
  static final String OUTLIER_ROUND_ROBIN = "{\"loadBalancingConfig\":[{\"outlier_detection_experimental\":{"
      + "\"interval\":\"1s\",\"baseEjectionTime\":\"30s\",\"maxEjectionTime\":\"300s\","
      + "\"maxEjectionPercentage\":50,"
      + "\"failurePercentageEjection\":{\"threshold\":50,\"enforcementPercentage\":100,\"minimumHosts\":3,"
      + "\"requestVolume\":5},"
      + "\"childPolicy\":[{\"round_robin\":{}}]}}]}";

  private GrpcBench() {}

  public static Result run(Plan plan, Path dir, PrintStream progress) {
    Result result = new Result(new SideResult(), new SideResult());
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      progress.println("grpc: started etcd at " + etcd.endpointsString());
      MusterNameResolverProvider resolver = MusterNameResolverProvider.of(registry);
      int samples = plan.tlsSamples();
      progress.printf("grpc: register() -> first RPC through a fresh channel, muster and round_robin in turns,"
          + " %d samples each...%n", samples);
      try {
        firstRpc(registry, resolver, samples, result);
        result.muster().note("first RPC: in-JVM Netty server, fresh channel per sample, clock from just before"
            + " register(); policies in turns, a new service per sample, one unrecorded warm-up sample each");
      } catch (RuntimeException e) {
        result.muster().failed("register -> first RPC", e.getMessage());
      }
      progress.printf("grpc: kill -9 windows, 3 provider processes, calls every %d ms, %d round(s) of TTL %d s"
          + " + 2 s...%n", CALL_INTERVAL.toMillis(), plan.callRounds(), plan.ttl().toSeconds());
      try {
        KillWindow.run(plan, dir, etcd.endpointsString(), resolver, result);
      } catch (RuntimeException e) {
        result.muster().failed("kill -9 window", e.getMessage());
      }
    } catch (RuntimeException e) {
      result.muster().failed("grpc", e.getMessage());
    }
    return result;
  }

  private static void firstRpc(EtcdRegistry registry, MusterNameResolverProvider resolver, int samples,
      Result result) {
    // A register() that takes long is a long sample, not a failed step: the suite's tests run this on two loaded
    // cores, where a lease grant has gone unanswered for the default 10 s.
    RegistrarConfig config = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false)
        .startTimeout(Duration.ofSeconds(60)).build();
    for (int i = -1; i < samples; i++) { // sample -1 of each policy loads and warms its classes, not recorded
      boolean musterFirst = i % 2 == 0;
      for (int turn = 0; turn < 2; turn++) {
        boolean muster = musterFirst == (turn == 0);
        SideResult side = muster ? result.muster() : result.roundRobin();
        String service = "bench-grpc-first-" + (muster ? "m" : "rr") + (i + 1);
        Server server = startEcho("s" + i);
        ManagedChannel channel = null;
        long t0 = System.nanoTime();
        try (Registration ignored = registry.register(Instance.of(service, "127.0.0.1", server.getPort())
            .id("s" + i), config)) {
          long registered = System.nanoTime();
          channel = channel(resolver, service, muster ? null : "round_robin");
          ClientCalls.blockingUnaryCall(channel, Echo.SAY, CallOptions.DEFAULT.withWaitForReady()
              .withDeadlineAfter(10, TimeUnit.SECONDS), Echo.say("hi", 0));
          long answered = System.nanoTime();
          if (i >= 0) {
            side.latency(FIRST_RPC).addNanos(answered - t0);
            side.latency(FIRST_RPC_REGISTER).addNanos(registered - t0);
          }
        } finally {
          if (channel != null) {
            channel.shutdownNow();
          }
          server.shutdownNow();
        }
      }
    }
  }

  static Server startEcho(String id) {
    try {
      return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(Echo.service(id))
          .build().start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start an Echo server: " + e.getMessage(), e);
    }
  }

  /**
   * A fresh {@code muster:///service} channel: the resolver's own service config (the muster policy) when
   * {@code policy} is null; otherwise that service config is ignored for {@code policy}, a policy name or a
   * service config JSON.
   */
  @SuppressWarnings("deprecation") // nameResolverFactory: the way to hand a channel one provider instance
  static ManagedChannel channel(MusterNameResolverProvider resolver, String service, String policy) {
    ManagedChannelBuilder<?> b = ManagedChannelBuilder.forTarget("muster:///" + service)
        .nameResolverFactory(resolver).usePlaintext();
    if (policy != null && policy.startsWith("{")) {
      @SuppressWarnings("unchecked")
      Map<String, ?> config = (Map<String, ?>) parseJson(policy);
      b.disableServiceConfigLookUp().defaultServiceConfig(config);
    } else if (policy != null) {
      b.disableServiceConfigLookUp().defaultLoadBalancingPolicy(policy);
    }
    return b.build();
  }

  private static Object parseJson(String json) {
    try {
      return io.grpc.internal.JsonParser.parse(json); // numbers as Double, as gRPC's config parsers expect
    } catch (IOException e) {
      throw new IllegalArgumentException("bad service config " + json + ": " + e.getMessage(), e);
    }
  }

  /** Channels for the kill -9 part: the muster policy with Muster's retries, round_robin with outlier detection. */
  static List<Channel> killChannels(MusterNameResolverProvider resolver, String service, List<ManagedChannel> own,
      MusterRetryInterceptor retry) {
    ManagedChannel muster = channel(resolver, service, null);
    ManagedChannel rr = channel(resolver, service, OUTLIER_ROUND_ROBIN);
    own.add(muster);
    own.add(rr);
    return new ArrayList<>(List.of(ClientInterceptors.intercept(muster, retry), rr));
  }

  static ChildProcess startProvider(Path dir, String endpoints, String service, String id, Plan plan) {
    return Jvms.start(dir, "grpc-provider-" + id, GrpcProvider.class.getName(), List.of(endpoints, service, id,
        Long.toString(plan.ttl().toSeconds()), Long.toString(plan.keepalive().toMillis())));
  }

  static void awaitStarted(ChildProcess p) {
    Wait.until(p.name() + " to register", Duration.ofSeconds(60), () -> {
      if (!p.isAlive()) {
        throw new IllegalStateException(p.name() + " exited: " + p.stderrTail());
      }
      return p.stdout().stream().anyMatch(l -> l.startsWith("started "));
    });
  }

  static String say(Channel channel) {
    return ClientCalls.blockingUnaryCall(channel, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(
        CALL_DEADLINE.toMillis(), TimeUnit.MILLISECONDS), Echo.say("hi", 0)).path("served_by").asText();
  }
}
