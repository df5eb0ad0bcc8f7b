package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The caller's scheme wins over the registry record's {@code secure} metadata: a {@code @LoadBalanced}
 * {@code WebClient} in a real Boot context, a real etcd, and a real TLS provider (the JDK's {@code HttpsServer}
 * with a certificate for 127.0.0.1 from a throw-away CA). A request written {@code https://orders/...} goes over
 * TLS although the record says {@code secure=false} or nothing; one written {@code http://orders/...} to a record
 * saying {@code secure=true} is upgraded.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MusterWebClientTlsIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final TestPki PKI = TestPki.create(TempDirs.create("muster-spring-tls-"));

  private final String namespace = "tls" + Long.toHexString(System.nanoTime() & 0xffffff);
  private final List<HttpServer> servers = new ArrayList<>();
  /** What the provider's handler saw, one entry per request: "tls" or "clear", and the Authorization header. */
  private final List<String> seen = new CopyOnWriteArrayList<>();
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

  /** A TLS provider on loopback that records whether each request came over TLS, and its Authorization header. */
  private int tlsProvider() throws IOException {
    HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.setHttpsConfigurator(new HttpsConfigurator(PKI.serverContext()));
    server.createContext("/", exchange -> {
      seen.add((exchange instanceof HttpsExchange ? "tls " : "clear ")
          + exchange.getRequestHeaders().getFirst("Authorization"));
      byte[] body = "paid".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    servers.add(server);
    return server.getAddress().getPort();
  }

  private void register(int port, Map<String, String> metadata) {
    providers.register(Instance.of("orders", "127.0.0.1", port).namespace(namespace).id("o1").metadata(metadata),
        RegistrarConfig.defaults().toBuilder().shutdownHook(false).drain(Duration.ZERO).build());
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(UtilAutoConfiguration.class, MusterAutoConfiguration.class,
            MusterLoadBalancerAutoConfiguration.class, LoadBalancerAutoConfiguration.class,
            LoadBalancerBeanPostProcessorAutoConfiguration.class, ReactorLoadBalancerClientAutoConfiguration.class))
        .withUserConfiguration(Client.class)
        .withPropertyValues("muster.endpoints=" + etcd.endpointsString(), "muster.namespace=" + namespace,
            "spring.cloud.service-registry.auto-registration.enabled=false");
  }

  /** The application's client: trusts the test CA (and nothing else), sends a password with every request. */
  private static WebClient client(WebClient.Builder builder, String baseUrl) {
    HttpClient jdk = HttpClient.newBuilder().sslContext(PKI.clientContext()).build();
    return builder.clone().clientConnector(new JdkClientHttpConnector(jdk)).baseUrl(baseUrl)
        .defaultHeader("Authorization", "Bearer s3cret").build();
  }

  @ParameterizedTest(name = "record metadata secure={0}")
  @ValueSource(strings = {"false", "(absent)"})
  void anHttpsRequestStaysHttpsWhateverTheRecordSays(String secure) throws Exception {
    register(tlsProvider(), secure.equals("false") ? Map.of("secure", "false") : Map.of());
    runner().run(ctx -> {
      assertThat(ctx).hasNotFailed();
      WebClient orders = client(ctx.getBean(WebClient.Builder.class), "https://orders");

      String body = orders.get().uri("/pay").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30));

      assertThat(body).isEqualTo("paid");
      assertThat(seen).as("what the provider saw").containsExactly("tls Bearer s3cret");
    });
  }

  @Test
  void anHttpRequestIsUpgradedToHttpsWhenTheRecordSaysSecure() throws Exception {
    register(tlsProvider(), Map.of("secure", "true"));
    runner().run(ctx -> {
      assertThat(ctx).hasNotFailed();
      WebClient orders = client(ctx.getBean(WebClient.Builder.class), "http://orders");

      String body = orders.get().uri("/pay").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(30));

      assertThat(body).isEqualTo("paid");
      assertThat(seen).containsExactly("tls Bearer s3cret");
    });
  }
}
