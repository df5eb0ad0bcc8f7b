package dev.muster.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MusterHttp} against real HTTP servers on loopback, with a hand-set endpoint set. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MusterHttpTest {
  private final List<HttpServer> servers = new ArrayList<>();
  private final StaticCache cache = new StaticCache();
  private MusterHttp http;

  @AfterEach
  void stop() {
    if (http != null) {
      http.close();
    }
    servers.forEach(s -> s.stop(0));
  }

  private Instance serving(String id, int status) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    byte[] body = id.getBytes();
    server.createContext("/", exchange -> {
      exchange.sendResponseHeaders(status, body.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    });
    server.start();
    servers.add(server);
    return Instance.of("hello", "127.0.0.1", server.getAddress().getPort()).id(id);
  }

  private static Instance refusing(String id) throws IOException {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    return Instance.of("hello", "127.0.0.1", port).id(id);
  }

  private MusterHttp http(OutlierConfig outlier, RetryConfig retry) {
    http = new MusterHttp(service -> cache, HttpCallConfig.defaults().withOutlier(outlier).withRetry(retry));
    return http;
  }

  private static final RetryConfig RETRY_ONCE = RetryConfig.defaults().toBuilder()
      .attemptTimeout(Duration.ofSeconds(2)).build();

  @Test
  void anIdempotentCallToARefusingEndpointIsRetriedElsewhereAndTheEndpointIsEjected() throws Exception {
    cache.publish(List.of(refusing("dead"), serving("alive", 200)));
    MusterHttp h = http(OutlierConfig.defaults(), RETRY_ONCE);
    for (int i = 0; i < 20; i++) {
      CallResult<HttpResponse<String>> r = h.get("hello", "/hello", Idempotent.YES).get(10, TimeUnit.SECONDS);
      assertThat(r.ok()).as("call %d: %s", i, r).isTrue();
      assertThat(r.value().body()).isEqualTo("alive");
    }
    assertThat(h.balancer("hello").detector().ejections()).isEqualTo(1);
  }

  @Test
  void aNonIdempotentCallIsNeverRetried() throws Exception {
    cache.publish(List.of(refusing("dead")));
    MusterHttp h = http(OutlierConfig.defaults().toBuilder().enabled(false).build(), RETRY_ONCE);
    CallResult<HttpResponse<String>> r = h.get("hello", "/hello", Idempotent.NO).get(10, TimeUnit.SECONDS);
    assertThat(r.ok()).isFalse();
    assertThat(r.attempts()).isEqualTo(1);
  }

  @Test
  void fiveConsecutive5xxEjectTheEndpointAndTheResponseIsReturnedMeanwhile() throws Exception {
    cache.publish(List.of(serving("broken", 503), serving("fine", 200)));
    // Round robin: power-of-two (the default) may prefer "fine" and leave "broken" short of 5 picks in a row.
    http = new MusterHttp(service -> cache, HttpCallConfig.defaults()
        .withBalancer(dev.muster.balance.BalancerConfig.defaults().toBuilder()
            .policy(dev.muster.balance.BalancerConfig.Policy.ROUND_ROBIN).build())
        .withRetry(RetryConfig.defaults().toBuilder().maxRetries(0).build()));
    MusterHttp h = http;
    for (int i = 0; i < 40 && h.balancer("hello").detector().ejections() == 0; i++) {
      h.get("hello", "/hello", Idempotent.NO).get(10, TimeUnit.SECONDS);
    }
    assertThat(h.balancer("hello").detector().ejections()).isEqualTo(1);
    for (int i = 0; i < 10; i++) {
      assertThat(h.get("hello", "/hello", Idempotent.NO).get(10, TimeUnit.SECONDS).value().body()).isEqualTo("fine");
    }
  }

  @Test
  void withTwoOfThreeEndpointsDeadRetriesStayWithinTheBudgetAndRefusalsAreCounted() throws Exception {
    cache.publish(List.of(refusing("dead-1"), refusing("dead-2"), serving("alive", 200)));
    MusterHttp h = http(OutlierConfig.defaults().toBuilder().enabled(false).build(), RETRY_ONCE);
    int calls = 1500;
    List<CompletableFuture<CallResult<HttpResponse<String>>>> all = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      all.add(h.get("hello", "/hello", Idempotent.YES));
      if (i % 50 == 49) {
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
      }
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    long retried = all.stream().map(CompletableFuture::join).filter(CallResult::retried).count();
    long refused = h.caller("hello").budget().refused();
    System.out.printf("2 of 3 dead, %d calls: %d retried, %d retries refused by the budget%n", calls, retried, refused);
    // 20 % of the requests plus a floor of 10/s over the 10 s window; the run takes well under 10 s.
    assertThat(retried).isLessThanOrEqualTo((long) (calls * 0.2) + 100 + 1);
    assertThat(refused).isPositive();
  }
}
