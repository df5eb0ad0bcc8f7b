package dev.muster.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsServer;
import dev.muster.InvalidInputException;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.client.ManualCache;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryConfig;
import dev.muster.testing.TestPki;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MusterHttp} keeps the caller's scheme: an {@code https} call reaches a real TLS provider (the JDK's
 * {@code HttpsServer} with a certificate for 127.0.0.1 from a throw-away CA) over TLS, its {@code Authorization}
 * header with it, and is never sent in clear.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MusterHttpTlsTest {
  @TempDir
  static Path dir;
  private static TestPki pki;

  private final ManualCache cache = new ManualCache();
  /** What the provider's handler saw, one line per request: "tls" or "clear", and the Authorization header. */
  private final List<String> seen = new CopyOnWriteArrayList<>();
  private HttpsServer server;
  private MusterHttp http;

  @BeforeAll
  static void ca() {
    pki = TestPki.create(dir.resolve("pki"));
  }

  @BeforeEach
  void provider() throws IOException {
    server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
    server.setHttpsConfigurator(new HttpsConfigurator(pki.serverContext()));
    server.createContext("/", exchange -> {
      seen.add((exchange instanceof HttpsExchange ? "tls " : "clear ")
          + exchange.getRequestHeaders().getFirst("Authorization"));
      byte[] body = "secret answer".getBytes();
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    });
    server.start();
    cache.publish(List.of(Instance.of("orders", "127.0.0.1", server.getAddress().getPort()).id("tls-1")));
  }

  @AfterEach
  void stop() {
    if (http != null) {
      http.close();
    }
    server.stop(0);
  }

  private MusterHttp http(HttpCallConfig config) {
    http = MusterHttp.builder(service -> cache).config(config
        .withOutlier(OutlierConfig.defaults().toBuilder().enabled(false).build())
        .withRetry(RetryConfig.defaults().toBuilder().maxRetries(0).attemptTimeout(Duration.ofSeconds(5)).build()))
        .build();
    return http;
  }

  private static HttpRequest withPassword(String uri) {
    return HttpRequest.newBuilder(URI.create(uri)).header("Authorization", "Bearer s3cret").GET().build();
  }

  @Test
  void anHttpsCallIsAnsweredOverTlsWithItsAuthorizationHeaderAndNeverSentInClear() throws Exception {
    MusterHttp h = http(HttpCallConfig.defaults().withTls(pki.clientContext(), null));

    CallResult<HttpResponse<String>> r = h.call("orders", withPassword("https://orders/pay"), Idempotent.YES)
        .get(30, TimeUnit.SECONDS);

    assertThat(r.ok()).as("%s", r).isTrue();
    assertThat(r.value().body()).isEqualTo("secret answer");
    assertThat(r.value().uri().getScheme()).isEqualTo("https");
    assertThat(seen).as("what the provider saw").containsExactly("tls Bearer s3cret");
  }

  @Test
  void anHttpsCallChecksTheProvidersCertificateAgainstTheCallersTrustStore() throws Exception {
    // The JVM's default CAs do not include the test CA: the handshake fails and nothing reaches the provider.
    MusterHttp h = http(HttpCallConfig.defaults());

    CallResult<HttpResponse<String>> r = h.call("orders", withPassword("https://orders/pay"), Idempotent.YES)
        .get(30, TimeUnit.SECONDS);

    assertThat(r.ok()).isFalse();
    assertThat(r.failure()).isInstanceOf(SSLHandshakeException.class);
    assertThat(seen).isEmpty();
  }

  @Test
  void eachAttemptKeepsTheCallersSchemeAndRefusesAnyOtherThanHttpOrHttps() throws Exception {
    // The JDK's HttpRequest builder takes http and https only; a request of another HttpRequest subclass may carry
    // anything, and is refused in one line rather than sent as http.
    Instance target = Instance.of("orders", "127.0.0.1", 8443).id("tls-1");
    assertThat(MusterHttp.targetUri(URI.create("https://orders/pay?x=1"), target))
        .hasToString("https://127.0.0.1:8443/pay?x=1");
    assertThat(MusterHttp.targetUri(URI.create("HTTPS://orders/pay"), target)).hasScheme("https");
    assertThat(MusterHttp.targetUri(URI.create("http://orders/pay"), target)).hasToString("http://127.0.0.1:8443/pay");
    assertThatThrownBy(() -> MusterHttp.targetUri(URI.create("ftp://orders/pay"), target))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("request URI scheme \"ftp\" is invalid: write the request as http://SERVICE/PATH or"
            + " https://SERVICE/PATH (https for TLS)");
  }
}
