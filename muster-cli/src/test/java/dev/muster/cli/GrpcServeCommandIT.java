package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.grpc.echo.Echo;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCalls;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster grpc-serve} as a real process against a real etcd, called by a plain gRPC channel (no Muster on
 * the client side): it registers with the port it bound, answers Echo and health, and on SIGTERM drains, lets a
 * call in flight finish, revokes and exits 0. The process is killed by pid when the test ends, pass or fail.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class GrpcServeCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration EXIT = Duration.ofSeconds(30);

  @Test
  void grpcServeRegistersAnswersEchoAndHealthThenDrainsAndRevokesOnSigterm() throws Exception {
    String service = "it-" + UUID.randomUUID().toString().substring(0, 8);
    try (ChildProcess p = MusterJar.start("grpc-serve", "--endpoints", etcd.endpointsString(), "--service", service,
        "--id", "g1", "--ttl", "3s", "--drain", "1s")) {
      JsonNode serving = MusterJar.awaitEvent(p, "serving");
      assertThat(p.json().eventNames()).as("%s", p).containsExactly("registered", "serving");
      int port = serving.get("port").asInt();
      assertThat(port).isPositive();

      try (ChildProcess ls = MusterJar.run(EXIT, "ls", service, "--endpoints", etcd.endpointsString())) {
        assertThat(ls.exitCode().getAsInt()).as("%s", ls).isZero();
        assertThat(ls.stdout().get(0)).matches("revision \\d+, 1 instance\\(s\\)");
        assertThat(ls.stdout().get(2)).contains(service, "g1", "127.0.0.1:" + port, "UP");
      }

      ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
      try {
        JsonNode reply = ClientCalls.blockingUnaryCall(channel, Echo.SAY,
            CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS), Echo.say("hi", 0));
        assertThat(reply.get("text").asText()).isEqualTo("hi");
        assertThat(reply.get("served_by").asText()).isEqualTo("g1");
        assertThat(health(channel, "")).isEqualTo(ServingStatus.SERVING);
        assertThat(health(channel, service)).isEqualTo(ServingStatus.SERVING);

        // In flight across the whole stop: longer than the drain, so it is still running at GOAWAY.
        var slow = ClientCalls.futureUnaryCall(channel.newCall(Echo.SAY,
            CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)), Echo.say("slow", 2_000));
        p.terminate(); // SIGTERM
        await("health NOT_SERVING").atMost(Duration.ofSeconds(5))
            .until(() -> health(channel, "") == ServingStatus.NOT_SERVING);
        assertThat(slow.get(20, TimeUnit.SECONDS).get("text").asText()).isEqualTo("slow");
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }

      assertThat(p.exitCode(EXIT)).as("%s", p).isEqualTo(0);
      assertThat(p.json().eventNames()).as("%s", p).containsExactly("registered", "serving", "draining", "drained", "revoked");
      assertThat(p.json().otherLines()).as("stdout is JSON lines only").isEmpty();
      JsonNode draining = MusterJar.awaitEvent(p, "draining");
      assertThat(draining.get("revision").asLong()).isPositive();
      try (ChildProcess ls = MusterJar.run(EXIT, "ls", service, "--endpoints", etcd.endpointsString())) {
        assertThat(ls.stdout().get(0)).as("%s", ls).matches("revision \\d+, 0 instance\\(s\\)");
      }
    }
  }

  private static ServingStatus health(ManagedChannel channel, String name) {
    return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService(name).build()).getStatus();
  }

}
