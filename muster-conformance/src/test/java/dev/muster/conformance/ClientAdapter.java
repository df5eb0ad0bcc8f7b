package dev.muster.conformance;

import dev.muster.RegistryUnavailableException;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.StalePolicy;
import dev.muster.cache.CacheConfig;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.client.MusterClient;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.GrpcHealthProbe;
import dev.muster.grpc.echo.Echo;
import dev.muster.health.ProbeConfig;
import dev.muster.retry.RetryConfig;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.TreeMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@link MusterClient}, the core facade (what {@code muster call} and {@code MusterHttp} run on), calling the
 * providers' Echo/Say over gRPC through its own attempts: the balancer, ejection, retries within the budget, probes
 * ({@code grpc.health.v1}), slow start and bounded staleness, all the core's.
 */
final class ClientAdapter implements Adapter {
  static final int CALLS = 30;

  private final MusterClient client;
  private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

  ClientAdapter(EtcdRegistry registry, Setup setup) {
    ProbeConfig probe = ProbeConfig.grpc("").withInterval(Duration.ofMillis(500)).withTimeout(Duration.ofMillis(400))
        .withThresholds(2, 2);
    client = MusterClient.builder(registry)
        .cache(CacheConfig.builder(Providers.SERVICE).namespace(setup.namespace()).version("v1")
            .trustedKeys(setup.trustKey() == null ? TrustedKeys.NONE : TrustedKeys.builder()
                .service(setup.namespace(), Providers.SERVICE, TrustedKey.read(setup.trustKey())).build()).build())
        // weighted random, as the gRPC policy's default: power of two's latency preference would decide the shares
        // of the slow-start check by itself (a provider called rarely answers its first calls slower, and loses), and
        // the check is of slow start (power of two's spread has its own tests, BalancerSpreadTest)
        .balancer(BalancerConfig.defaults().toBuilder().policy(BalancerConfig.Policy.WEIGHTED_RANDOM)
            .maxStale(setup.maxStale(), StalePolicy.FAIL_CLOSED).slowStart(setup.slowStart()).build())
        .retry(RetryConfig.defaults().toBuilder().maxRetries(2).attemptTimeout(Duration.ofSeconds(1)).build())
        .probe(probe, new GrpcHealthProbe(probe))
        .healthEvents(e -> System.out.println("[conformance] MusterClient " + e))
        .build();
  }

  MusterClient client() {
    return client;
  }

  @Override
  public String column() {
    return "MusterClient";
  }

  @Override
  public Observation observe() {
    Map<String, Integer> ids = new TreeMap<>();
    int refused = 0;
    int failed = 0;
    String detail = "";
    for (int i = 0; i < CALLS; i++) {
      CallResult<String> r;
      try {
        r = client.call((target, timeout) -> say(target.address() + ":" + target.port(), timeout), Idempotent.YES)
            .get(10, TimeUnit.SECONDS);
      } catch (Exception e) {
        failed++;
        detail = e.toString();
        continue;
      }
      if (r.ok()) {
        ids.merge(r.value(), 1, Integer::sum);
      } else if (r.failure() instanceof RegistryUnavailableException) {
        refused++;
        detail = r.failure().getMessage();
      } else {
        failed++;
        detail = String.valueOf(r.failure());
      }
    }
    return new Observation(ids, refused, failed, detail.isEmpty() ? client.balancer().endpoints().toString()
        : detail);
  }

  /** One Echo/Say to {@code hostPort}: its {@code served_by}. */
  private CompletableFuture<AttemptResult<String>> say(String hostPort, Duration timeout) {
    ManagedChannel channel = channels.computeIfAbsent(hostPort,
        a -> ManagedChannelBuilder.forTarget(a).usePlaintext().build());
    CompletableFuture<AttemptResult<String>> done = new CompletableFuture<>();
    ClientCalls.asyncUnaryCall(channel.newCall(Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(timeout.toNanos(),
        TimeUnit.NANOSECONDS)), Echo.say("hi", 0), new StreamObserver<JsonNode>() {
          @Override
          public void onNext(JsonNode value) {
            done.complete(AttemptResult.success(value.path("served_by").asText()));
          }

          @Override
          public void onError(Throwable t) {
            done.complete(AttemptResult.localOriginFailure(t));
          }

          @Override
          public void onCompleted() {
            done.complete(AttemptResult.localOriginFailure(new IllegalStateException("no reply")));
          }
        });
    return done;
  }

  @Override
  public void close() {
    client.close();
    channels.values().forEach(ManagedChannel::shutdownNow);
  }
}
