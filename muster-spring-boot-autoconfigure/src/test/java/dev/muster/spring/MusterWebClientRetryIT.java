package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.retry.RetryBudget;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerBeanPostProcessorAutoConfiguration;
import org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Exceptions;

/**
 * A {@code @LoadBalanced} {@code WebClient} with Spring Cloud's reactive retries ({@code
 * spring.cloud.loadbalancer.retry.enabled=true}) against real HTTP servers registered in a real etcd: each request
 * deposits into the service's retry budget, each retry withdraws, and a refused retry ends the request with what
 * its last attempt got, as for the blocking clients.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MusterWebClientRetryIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final String namespace = "wc" + Long.toHexString(System.nanoTime() & 0xffffff);
  private final List<HttpServer> servers = new ArrayList<>();
  private EtcdRegistry providers;

  @BeforeEach
  void connect() {
    providers = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
  }

  @AfterEach
  void close() {
    servers.forEach(s -> s.stop(0));
    providers.close();
  }

  /** The load-balanced builder, as an application declares it. */
  @Configuration(proxyBeanMethods = false)
  static class Client {
    @Bean
    @LoadBalanced
    WebClient.Builder loadBalanced() {
      return WebClient.builder();
    }
  }

  /**
   * A JDK server on loopback answering {@code status} with its own id, counting the requests it got; status 0:
   * it closes the connection without an answer.
   */
  private int server(String id, int status, Map<String, AtomicInteger> hits) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.createContext("/", exchange -> {
      hits.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      if (status == 0) {
        exchange.close();
        return;
      }
      byte[] body = id.getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    servers.add(server);
    return server.getAddress().getPort();
  }

  private void register(String id, int port) {
    providers.register(Instance.of("orders", "127.0.0.1", port).namespace(namespace).id(id),
        RegistrarConfig.defaults().toBuilder().shutdownHook(false).build());
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(UtilAutoConfiguration.class, MusterAutoConfiguration.class,
            MusterLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
            LoadBalancerBeanPostProcessorAutoConfiguration.class, ReactorLoadBalancerClientAutoConfiguration.class))
        .withUserConfiguration(Client.class)
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("muster.endpoints=" + etcd.endpointsString(), "muster.namespace=" + namespace,
            "spring.cloud.service-registry.auto-registration.enabled=false",
            "spring.cloud.loadbalancer.retry.enabled=true",
            "spring.cloud.loadbalancer.retry.max-retries-on-next-service-instance=1",
            "spring.cloud.loadbalancer.retry.retryable-status-codes=503");
  }

  /** The client, with a last filter that sees every attempt (after the load balancer's) and counts it. */
  private static WebClient client(WebClient.Builder builder, AtomicInteger attempts) {
    return builder.clone().filter((request, next) -> {
      attempts.incrementAndGet();
      return next.exchange(request);
    }).baseUrl("http://orders").build();
  }

  /** How a request failed: its status, or the failure without an answer. */
  private static String outcome(RuntimeException e) {
    if (e instanceof WebClientResponseException answer) {
      return Integer.toString(answer.getStatusCode().value());
    }
    if (e instanceof WebClientRequestException) {
      return "connection failed";
    }
    if (Exceptions.isRetryExhausted(e)) {
      Throwable cause = e;
      while (Exceptions.isRetryExhausted(cause) && cause.getCause() != null) {
        cause = cause.getCause();
      }
      return cause instanceof RuntimeException r && !Exceptions.isRetryExhausted(r) ? "retries exhausted: "
          + outcome(r) : "retries exhausted: " + cause;
    }
    return e.toString();
  }

  /** Sends {@code requests} GETs one after another; what each ended with ("200", a status, or the failure). */
  private static List<String> send(WebClient orders, int requests) {
    List<String> outcomes = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      try {
        orders.get().uri("/orders/{i}", i).retrieve().toBodilessEntity().block(Duration.ofSeconds(20));
        outcomes.add("200");
      } catch (RuntimeException e) {
        outcomes.add(outcome(e));
      }
    }
    return outcomes;
  }

  @ParameterizedTest(name = "failing with {0}")
  @ValueSource(strings = {"503", "no answer"})
  void whenEveryInstanceFailsTheRetriesAreBoundedByTheBudgetAndTheRestAreRefused(String failure) throws Exception {
    Map<String, AtomicInteger> hits = new ConcurrentHashMap<>();
    int status = failure.equals("503") ? 503 : 0; // 503: Spring Cloud's policy wants the retry; no answer: Reactor's
    register("o1", server("o1", status, hits));
    register("o2", server("o2", status, hits));
    register("o3", LoopbackPorts.pick()); // nothing listens: the connection is refused
    // 20 % of the requests and no floor, over a window longer than the test: request n may have the n/5-th retry.
    runner().withPropertyValues("muster.loadbalancer.retry-budget.percent-can-retry=0.2",
        "muster.loadbalancer.retry-budget.min-retries-per-second=0",
        "muster.loadbalancer.retry-budget.ttl=1h").run(ctx -> {
          assertThat(ctx).hasNotFailed();
          AtomicInteger attempts = new AtomicInteger();
          WebClient orders = client(ctx.getBean(WebClient.Builder.class), attempts);
          int requests = 20;
          List<String> outcomes = send(orders, requests);
          RetryBudget budget = ctx.getBean(MusterClients.class).client("orders").budget();
          int retries = attempts.get() - requests;
          System.out.printf("[webclient retry IT] %d requests, %d attempts, hits %s, outcomes %s, budget %s%n",
              requests, attempts.get(), hits, outcomes, budget);
          assertThat(attempts.get()).as("no request went unsent").isGreaterThanOrEqualTo(requests);
          // Spring Cloud ends a request whose last retry failed without an answer with Reactor's "retries
          // exhausted"; one whose retry was refused ends as its first attempt did, never with anything else.
          assertThat(outcomes).as("every instance fails; each request ends with its last attempt's failure")
              .hasSize(requests).isSubsetOf("503", "connection failed", "retries exhausted: connection failed");
          assertThat(budget.deposits()).as("one deposit per request, none per retry").isEqualTo(requests);
          assertThat(retries).as("retries made").isEqualTo(budget.withdrawals()).isLessThanOrEqualTo(requests / 5);
          assertThat(budget.refused()).as("every request wanted a retry: those not made were refused")
              .isEqualTo(requests - retries);
          assertThat(ctx.getBean(MeterRegistry.class).get("muster.retry.budget.refused").tag("service", "orders")
              .functionCounter().count()).isEqualTo(requests - retries);
        });
  }

  @Test
  void withAFreshBudgetAFailedFirstAttemptIsRetriedOnAnotherInstanceAndSucceeds() throws Exception {
    // Two instances that take turns: of all the attempts they get, the 1st, 3rd, 5th... answer 503, the others
    // 200. Requests go one at a time, so each one's first attempt fails, wherever it lands, and its retry does not.
    AtomicInteger turn = new AtomicInteger();
    List<String> attemptsSeen = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (String id : List.of("o1", "o2")) {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      server.createContext("/", exchange -> {
        int status = turn.incrementAndGet() % 2 == 1 ? 503 : 200;
        attemptsSeen.add(id + " " + status);
        byte[] body = id.getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(status, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
      });
      server.start();
      servers.add(server);
      register(id, server.getAddress().getPort());
    }
    runner().run(ctx -> {
      assertThat(ctx).hasNotFailed();
      AtomicInteger attempts = new AtomicInteger();
      WebClient orders = client(ctx.getBean(WebClient.Builder.class), attempts);
      int requests = 4; // fewer than the 5 503s in a row that would eject an instance
      for (int i = 0; i < requests; i++) {
        String servedBy = orders.get().uri("/orders/{i}", i).retrieve().bodyToMono(String.class)
            .block(Duration.ofSeconds(20));
        assertThat(attemptsSeen.get(2 * i)).as("request %d's first attempt", i).endsWith(" 503");
        assertThat(attemptsSeen.get(2 * i + 1)).as("request %d's retry, on the other instance", i)
            .isEqualTo(servedBy + " 200").doesNotStartWith(attemptsSeen.get(2 * i).substring(0, 2));
      }
      RetryBudget budget = ctx.getBean(MusterClients.class).client("orders").budget();
      System.out.printf("[webclient retry IT] %d requests, attempts %s, budget %s%n", requests, attemptsSeen,
          budget);
      assertThat(attempts.get()).isEqualTo(2 * requests);
      assertThat(budget.deposits()).as("one deposit per request").isEqualTo(requests);
      assertThat(budget.withdrawals()).as("one withdrawal per retry").isEqualTo(requests);
      assertThat(budget.refused()).isZero();
    });
  }

  @Test
  void aRetryAfterAFailureWithoutAnswerThatGetsA503EndsWithThat503() throws Exception {
    // Found once under load (issue 35): Spring Cloud counts a retry for a status in its context but a retry for an
    // error only in Reactor's, so "no answer, then a 503 on the retry" asked for one more retry than Reactor had,
    // and the caller got Reactor's "retries exhausted" around an internal RetryableStatusCodeException instead of
    // the 503. Attempts take turns across the two instances: odd ones get no answer within the client's response
    // timeout (the JDK's client retries a GET whose connection closed early by itself, not a timeout), even ones say
    // 503.
    AtomicInteger turn = new AtomicInteger();
    List<String> attemptsSeen = new java.util.concurrent.CopyOnWriteArrayList<>();
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    for (String id : List.of("o1", "o2")) {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
      server.createContext("/", exchange -> {
        boolean answer = turn.incrementAndGet() % 2 == 0;
        attemptsSeen.add(id + (answer ? " 503" : " no answer"));
        if (!answer) {
          try {
            done.await(30, TimeUnit.SECONDS); // until the test ends: the client gives up first
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          exchange.close();
          return;
        }
        exchange.sendResponseHeaders(503, -1);
        exchange.close();
      });
      server.start();
      servers.add(server);
      register(id, server.getAddress().getPort());
    }
    try {
      runner().run(ctx -> {
        assertThat(ctx).hasNotFailed();
        AtomicInteger attempts = new AtomicInteger();
        var connector = new org.springframework.http.client.reactive.JdkClientHttpConnector();
        connector.setReadTimeout(Duration.ofMillis(500));
        WebClient orders = client(ctx.getBean(WebClient.Builder.class).clone().clientConnector(connector), attempts);
        int requests = 1;
        List<String> outcomes = send(orders, requests);
        System.out.printf("[webclient retry IT] attempts %s, outcomes %s%n", attemptsSeen, outcomes);
        assertThat(attemptsSeen).as("each request: no answer, then a 503 on the retry").hasSize(2 * requests);
        assertThat(outcomes).as("each request ends with its last attempt's answer").containsOnly("503");
      });
    } finally {
      done.countDown();
    }
  }
}
