package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.health.ProbeConfig;
import dev.muster.health.ProbeResult;
import dev.muster.registry.Instance;
import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link GrpcHealthProbe} against real gRPC servers on loopback: SERVING passes; NOT_SERVING, a server without the
 * health service and a stopped server fail, each saying what it saw.
 */
class GrpcHealthProbeTest {
  /**
   * 10 s, not 2: what a probe answers is asked here, not how fast. A clean-clone suite of 0b7ad33 had this class's
   * first check, the first gRPC call of a cold test JVM (Netty, the health service's classes), time out after 2 s
   * while the suite's first step built and tested two modules at once on the two cores.
   */
  private static final Duration TIMEOUT = Duration.ofSeconds(10);

  private static Instance at(Server server) {
    return Instance.of("echo", "127.0.0.1", server.getPort()).id("e" + server.getPort());
  }

  private static ProbeResult check(GrpcHealthProbe probe, Instance target) throws Exception {
    return probe.check(target, TIMEOUT).get(30, TimeUnit.SECONDS);
  }

  @Test
  void servingPassesAndEverythingElseFailsSayingWhatItSaw() throws Exception {
    HealthStatusManager health = new HealthStatusManager();
    Server withHealth = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(health.getHealthService()).build().start();
    Server without = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).build().start();
    try (GrpcHealthProbe probe = new GrpcHealthProbe(ProbeConfig.grpc(""))) {
      health.setStatus("", ServingStatus.SERVING);
      assertThat(check(probe, at(withHealth))).isEqualTo(ProbeResult.pass("SERVING"));
      health.setStatus("", ServingStatus.NOT_SERVING);
      assertThat(check(probe, at(withHealth))).isEqualTo(ProbeResult.fail("NOT_SERVING"));

      ProbeResult unimplemented = check(probe, at(without));
      assertThat(unimplemented.healthy()).isFalse();
      assertThat(unimplemented.detail()).startsWith("UNIMPLEMENTED");

      Instance stopped = at(without);
      probe.forget(stopped);
      without.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      ProbeResult down = check(probe, stopped);
      assertThat(down.healthy()).isFalse();
      assertThat(down.detail()).startsWith("UNAVAILABLE");
    } finally {
      withHealth.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      without.shutdownNow();
    }
  }

  @Test
  void aServiceNameIsAskedForAndAnotherKindIsRefused() throws Exception {
    HealthStatusManager health = new HealthStatusManager();
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
        .addService(health.getHealthService()).build().start();
    try (GrpcHealthProbe probe = new GrpcHealthProbe(ProbeConfig.grpc("echo.Echo"))) {
      assertThat(check(probe, at(server)).detail()).startsWith("NOT_FOUND"); // not registered: grpc's answer
      health.setStatus("echo.Echo", ServingStatus.SERVING);
      assertThat(check(probe, at(server))).isEqualTo(ProbeResult.pass("SERVING"));
    } finally {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    assertThatThrownBy(() -> new GrpcHealthProbe(ProbeConfig.tcp())).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tcp connect");
  }
}
