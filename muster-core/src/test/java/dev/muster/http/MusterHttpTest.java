package dev.muster.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.muster.call.CallResult;
import dev.muster.call.NoEndpointException;
import dev.muster.client.ManualCache;
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
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MusterHttp} against real HTTP servers on loopback, with a hand-set endpoint set. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MusterHttpTest {
  private final List<HttpServer> servers = new ArrayList<>();
  private final ManualCache cache = new ManualCache();
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
    http = MusterHttp.builder(service -> cache).config(HttpCallConfig.defaults().withOutlier(outlier)
        .withRetry(retry)).build();
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
    http = MusterHttp.builder(service -> cache).config(HttpCallConfig.defaults()
        .withBalancer(dev.muster.balance.BalancerConfig.defaults().toBuilder()
            .policy(dev.muster.balance.BalancerConfig.Policy.ROUND_ROBIN).build())
        .withRetry(RetryConfig.defaults().toBuilder().maxRetries(0).build())).build();
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
    // A window of an hour and no per-second floor: however slow the machine, the whole run falls in one window,
    // so the bound is exactly 20 % of the requests, with no assumption about how long the run takes.
    RetryConfig budget = RETRY_ONCE.toBuilder().budget(Duration.ofHours(1), 0.2, 0).build();
    MusterHttp h = http(OutlierConfig.defaults().toBuilder().enabled(false).build(), budget);
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
    long refused = h.budget("hello").refused();
    System.out.printf("2 of 3 dead, %d calls: %d retried, %d retries refused by the budget%n", calls, retried, refused);
    assertThat(retried).isLessThanOrEqualTo((long) (calls * 0.2));
    assertThat(retried).isEqualTo(h.budget("hello").withdrawals());
    assertThat(refused).isPositive();
  }

  @Test
  void theRawPathAndQueryAreSentUnchanged() throws Exception {
    Map<String, String> seen = new ConcurrentHashMap<>();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
    server.createContext("/", exchange -> {
      seen.put("uri", exchange.getRequestURI().toString());
      exchange.sendResponseHeaders(204, -1);
      exchange.close();
    });
    server.start();
    servers.add(server);
    cache.publish(List.of(Instance.of("hello", "127.0.0.1", server.getAddress().getPort()).id("echo")));
    MusterHttp h = http(OutlierConfig.defaults(), RETRY_ONCE);

    CallResult<HttpResponse<String>> r = h.get("hello", "/a%2Fb?q=a%26b", Idempotent.YES).get(10, TimeUnit.SECONDS);

    assertThat(r.ok()).as("%s", r).isTrue();
    assertThat(seen.get("uri")).isEqualTo("/a%2Fb?q=a%26b");
  }

  @Test
  void closeClosesEveryCacheItOpened() {
    Map<String, ManualCache> opened = new ConcurrentHashMap<>();
    http = MusterHttp.builder(service -> opened.computeIfAbsent(service, s -> new ManualCache())).config(HttpCallConfig.defaults()).build();
    http.balancer("orders");
    http.balancer("billing");

    http.close();

    assertThat(opened).hasSize(2);
    assertThat(opened.values()).allSatisfy(c -> assertThat(c.closes()).isEqualTo(1));
    assertThatThrownBy(() -> http.get("orders", "/", Idempotent.YES)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aSlowCacheOpenForOneServiceDoesNotHoldUpAnother() throws Exception {
    // Two names in the same bin of a fresh ConcurrentHashMap (16 bins), where computeIfAbsent's lock would make
    // the second wait for the first's cache to open.
    String slow = "svc-0";
    String fast = null;
    for (int i = 1; fast == null; i++) {
      if (bin("svc-" + i) == bin(slow)) {
        fast = "svc-" + i;
      }
    }
    CountDownLatch opening = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    http = MusterHttp.builder(service -> {
      if (service.equals(slow)) {
        opening.countDown();
        await(release);
      }
      return new ManualCache();
    }).config(HttpCallConfig.defaults()).build();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      pool.submit(() -> http.balancer(slow));
      assertThat(opening.await(10, TimeUnit.SECONDS)).isTrue();
      String other = fast;
      CompletableFuture<Object> fastOpen = CompletableFuture.supplyAsync(() -> http.balancer(other), pool);
      assertThat(fastOpen.get(10, TimeUnit.SECONDS)).isNotNull();
    } finally {
      release.countDown();
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }
  }

  @Test
  void aCallBeforeTheFirstSetWaitsForIt() throws Exception {
    MusterHttp h = http(OutlierConfig.defaults(), RETRY_ONCE);
    CompletableFuture<CallResult<HttpResponse<String>>> call = h.get("hello", "/hello", Idempotent.YES);
    assertThat(call).isNotDone();

    cache.publish(List.of(serving("late", 200)));

    assertThat(call.get(10, TimeUnit.SECONDS).value().body()).isEqualTo("late");
  }

  @Test
  void aCallWithNoFirstSetWithinTheTimeoutFailsWithNoEndpoint() throws Exception {
    http = MusterHttp.builder(service -> cache).config(HttpCallConfig.defaults()
        .withFirstSetTimeout(Duration.ofMillis(50))).build();

    CallResult<HttpResponse<String>> r = http.get("hello", "/hello", Idempotent.YES).get(10, TimeUnit.SECONDS);

    assertThat(r.failure()).isInstanceOf(NoEndpointException.class).hasMessageContaining("hello");
  }

  private static int bin(String key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & 15;
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
