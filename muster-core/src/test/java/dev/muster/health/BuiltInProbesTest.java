package dev.muster.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.muster.registry.Instance;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The built-in probes against real sockets on loopback: TCP passes on an accepted connection and fails on a refused
 * one; HTTP passes on an expected status only, fails on another, on a refused connection and on a server that
 * never answers (within the timeout), and never follows a redirect.
 */
class BuiltInProbesTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  private final ExecutorService pool = Executors.newFixedThreadPool(2);

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  private static Instance at(int port) {
    return Instance.of("orders", "127.0.0.1", port).id("o" + port);
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static ProbeResult get(Probe probe, Instance target) throws Exception {
    return probe.check(target, TIMEOUT).get(10, TimeUnit.SECONDS);
  }

  @Test
  void tcpPassesOnAnAcceptedConnectionAndFailsOnARefusedOne() throws Exception {
    try (Probe tcp = Probe.of(ProbeConfig.tcp(), pool);
         ServerSocket listening = new ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      assertThat(get(tcp, at(listening.getLocalPort()))).isEqualTo(ProbeResult.pass("connected"));
      ProbeResult refused = get(tcp, at(freePort()));
      assertThat(refused.healthy()).isFalse();
      assertThat(refused.detail()).isEqualTo("connection refused");
    }
  }

  @Test
  void httpPassesOnlyOnAnExpectedStatusAndNeverFollowsARedirect() throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/ok", e -> {
      e.sendResponseHeaders(200, -1);
      e.close();
    });
    server.createContext("/busy", e -> {
      e.sendResponseHeaders(503, -1);
      e.close();
    });
    server.createContext("/moved", e -> {
      e.getResponseHeaders().set("Location", "/ok");
      e.sendResponseHeaders(302, -1);
      e.close();
    });
    server.createContext("/slow", e -> {
      try {
        Thread.sleep(5_000);
      } catch (InterruptedException ignored) {
        Thread.currentThread().interrupt();
      }
      e.close();
    });
    server.setExecutor(Executors.newCachedThreadPool());
    server.start();
    Instance target = at(server.getAddress().getPort());
    try (Probe ok = Probe.of(ProbeConfig.http("/ok"), pool);
         Probe busy = Probe.of(ProbeConfig.http("/busy"), pool);
         Probe moved = Probe.of(ProbeConfig.http("/moved"), pool);
         Probe movedAllowed = Probe.of(ProbeConfig.http("/moved").withExpectedStatuses("200-399"), pool);
         Probe slow = Probe.of(ProbeConfig.http("/slow"), pool)) {
      assertThat(get(ok, target)).isEqualTo(ProbeResult.pass("200"));
      assertThat(get(busy, target)).isEqualTo(ProbeResult.fail("503"));
      assertThat(get(moved, target)).as("a redirect is not followed").isEqualTo(ProbeResult.fail("302"));
      assertThat(get(movedAllowed, target)).isEqualTo(ProbeResult.pass("302"));
      ProbeResult timedOut = slow.check(target, Duration.ofMillis(300)).get(10, TimeUnit.SECONDS);
      assertThat(timedOut).isEqualTo(ProbeResult.fail("timed out after 300 ms"));
      assertThat(get(ok, at(freePort()))).isEqualTo(ProbeResult.fail("connection refused"));
    } finally {
      server.stop(0);
      ((ExecutorService) server.getExecutor()).shutdownNow();
    }
  }

  @Test
  void aGrpcProbeNeedsMusterGrpcAndSaysSo() {
    assertThatThrownBy(() -> Probe.of(ProbeConfig.grpc(""), pool)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("GrpcHealthProbe");
  }
}
