package dev.muster.conformance;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterNameResolverProvider;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.grpc.echo.Echo;
import dev.muster.retry.RetryConfig;
import dev.muster.sign.TrustedKey;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC channel on {@code muster:///echo}: the resolver (trusted keys), the {@code muster} policy (probes, maxStale,
 * slow start from the target's parameters) and Muster's retry interceptor, calling Echo/Say.
 */
final class GrpcAdapter implements Adapter {
  private final ManagedChannel channel;
  private final Channel calls;

  @SuppressWarnings("deprecation") // nameResolverFactory: the one public way to give one channel its own resolver
  GrpcAdapter(EtcdRegistry registry, Setup setup) {
    String target = "muster:///" + Providers.SERVICE + "?namespace=" + setup.namespace() + "&probe=grpc"
        + "&probeInterval=500ms" + (setup.maxStale() == null ? "" : "&maxStale=" + setup.maxStale().toMillis() + "ms")
        + (setup.slowStart().isZero() ? "" : "&slowStart=" + setup.slowStart().toMillis() + "ms");
    channel = ManagedChannelBuilder.forTarget(target)
        .nameResolverFactory(MusterNameResolverProvider.of(registry, setup.trustKey() == null ? List.of()
            : List.of(TrustedKey.read(setup.trustKey()))))
        .usePlaintext().build();
    calls = ClientInterceptors.intercept(channel, MusterRetryInterceptor.create(RetryConfig.defaults().toBuilder()
        .maxRetries(2).attemptTimeout(Duration.ofSeconds(1)).build()));
  }

  @Override
  public String column() {
    return "gRPC channel";
  }

  @Override
  public Observation observe() {
    Map<String, Integer> ids = new TreeMap<>();
    int refused = 0;
    int failed = 0;
    String detail = "";
    for (int i = 0; i < ClientAdapter.CALLS; i++) {
      try {
        JsonNode reply = ClientCalls.blockingUnaryCall(calls, Echo.SAY,
            CallOptions.DEFAULT.withDeadlineAfter(3, TimeUnit.SECONDS), Echo.say("hi", 0));
        ids.merge(reply.path("served_by").asText(), 1, Integer::sum);
      } catch (StatusRuntimeException e) {
        String d = String.valueOf(e.getStatus().getDescription());
        if (e.getStatus().getCode() == Status.Code.UNAVAILABLE && d.contains("maxStale")) {
          refused++;
        } else {
          failed++;
        }
        detail = e.getStatus().toString();
      }
    }
    return new Observation(ids, refused, failed, detail);
  }

  @Override
  public void close() {
    channel.shutdownNow();
  }
}
