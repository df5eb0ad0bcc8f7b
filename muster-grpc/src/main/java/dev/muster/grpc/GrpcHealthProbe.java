package dev.muster.grpc;

import dev.muster.health.Probe;
import dev.muster.health.ProbeConfig;
import dev.muster.health.ProbeResult;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * {@code grpc.health.v1.Health/Check} on each endpoint, for {@code MusterClient.Builder.probe(config, probe)}:
 * passes on {@code SERVING} only; {@code NOT_SERVING}, {@code SERVICE_UNKNOWN}, {@code UNIMPLEMENTED} (no health
 * service) or no answer within the timeout fail. One plaintext channel per endpoint, kept while the endpoint is in
 * the set ({@link #forget} shuts it down) so a probe does not pay a connection each time. Thread-safe.
 */
public final class GrpcHealthProbe implements Probe {
  private final ProbeConfig config;
  private final Map<InstanceKey, ManagedChannel> channels = new ConcurrentHashMap<>();
  private volatile boolean closed;

  public GrpcHealthProbe(ProbeConfig config) {
    if (config.kind() != ProbeConfig.Kind.GRPC) {
      throw new IllegalArgumentException("GrpcHealthProbe probes grpc.health.v1; the config asks for "
          + config.describe());
    }
    this.config = config;
  }

  @Override
  public CompletableFuture<ProbeResult> check(Instance target, Duration timeout) {
    if (closed) {
      return CompletableFuture.completedFuture(ProbeResult.fail("the probe is closed"));
    }
    ManagedChannel channel = channels.computeIfAbsent(target.key(), k -> NettyChannelBuilder
        .forAddress(target.address(), target.port()).usePlaintext().defaultLoadBalancingPolicy("pick_first")
        .build());
    CompletableFuture<ProbeResult> result = new CompletableFuture<>();
    HealthGrpc.newStub(channel).withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
        .check(HealthCheckRequest.newBuilder().setService(config.grpcService()).build(),
            new StreamObserver<>() {
              @Override
              public void onNext(HealthCheckResponse r) {
                result.complete(r.getStatus() == ServingStatus.SERVING ? ProbeResult.pass("SERVING")
                    : ProbeResult.fail(r.getStatus().name()));
              }

              @Override
              public void onError(Throwable t) {
                Status s = Status.fromThrowable(t);
                result.complete(ProbeResult.fail(s.getCode() == Status.Code.DEADLINE_EXCEEDED
                    ? "timed out after " + timeout.toMillis() + " ms"
                    : s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription())));
              }

              @Override
              public void onCompleted() {
                result.complete(ProbeResult.fail("no answer"));
              }
            });
    return result;
  }

  @Override
  public void forget(Instance target) {
    ManagedChannel c = channels.remove(target.key());
    if (c != null) {
      c.shutdownNow();
    }
  }

  @Override
  public void close() {
    closed = true;
    for (InstanceKey key : Map.copyOf(channels).keySet()) {
      ManagedChannel c = channels.remove(key);
      if (c != null) {
        c.shutdownNow();
      }
    }
  }
}
