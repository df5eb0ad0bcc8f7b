package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.AccessDeniedException;
import dev.muster.ErrorCode;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Muster over mutual TLS to a real etcd member that serves only {@code https://} and requires a client certificate
 * signed by its CA ({@code --client-cert-auth}); the certificates are made by {@link TestPki} with openssl.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class TlsIT {
  private static final TestPki PKI = TestPki.create(TempDirs.create("muster-tls-it-"));

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).tls(PKI).build();

  private final String service = "tls-" + UUID.randomUUID().toString().substring(0, 8);

  private static EtcdConfig.Builder config() {
    TestPki.Pair client = PKI.client("orders");
    return EtcdConfig.builder().endpoints(etcd.endpointsString())
        .tls(PKI.ca(), client.certificate(), client.key()).requestTimeout(Duration.ofSeconds(2));
  }

  @Test
  void aProviderAndACacheWorkOverMutualTls() {
    assertThat(etcd.endpointsString()).startsWith("https://");
    try (EtcdRegistry registry = EtcdRegistry.connect(config().build())) {
      Registration r = registry.register(Instance.of(service, "127.0.0.1", 8080).id("a"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).build());
      EndpointCache cache = registry.watch(CacheConfig.builder(service).build());
      assertThat(cache.awaitReady(Duration.ofSeconds(30))).isTrue();
      assertThat(cache.current().instances()).extracting(Instance::id).containsExactly("a");
      // The keepalives run on Muster's own stream, on jetcd's channel: the same TLS connection.
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> registry.connectionStats().get("keepalive.answered") >= 2);
      assertThat(r.state()).isEqualTo(dev.muster.registry.RegistrationState.ACTIVE);
      r.close();
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(30))
          .until(() -> cache.current().instances().isEmpty());
    }
  }

  @Test
  void aServerCertificateFromAnotherCaIsRefusedWithoutRegisteringAnything() {
    TestPki.Pair client = PKI.client("orders");
    EtcdConfig wrongCa = config().tls(PKI.otherCa(), client.certificate(), client.key()).build();
    long started = System.nanoTime();
    try (EtcdRegistry registry = EtcdRegistry.connect(wrongCa)) {
      assertThatThrownBy(() -> registry.register(Instance.of(service, "127.0.0.1", 8080).id("b"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).startTimeout(Duration.ofSeconds(20)).build()))
          .isInstanceOf(AccessDeniedException.class).hasMessageContaining(etcd.endpointsString())
          .satisfies(e -> assertThat(((AccessDeniedException) e).code()).isEqualTo(ErrorCode.AUTHENTICATION_FAILED))
          .as("names the TLS cause").hasMessageContaining("TLS: unable to find valid certification path")
          .satisfies(e -> System.out.println("[tls IT] wrong CA: " + e.getMessage()));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("refused, not retried until the start timeout")
        .isLessThan(Duration.ofSeconds(15));
    try (EtcdRegistry good = EtcdRegistry.connect(config().build())) {
      assertThat(good.list("default", service).instances()).isEmpty();
    }
  }

  /**
   * Both lines speak TLS 1.3 to Java; the alert for a missing client certificate comes from the Go each was built
   * with: Debian's 3.4.23 (Go 1.19) sends {@code bad_certificate}, 3.5.30 (Go 1.26) TLS 1.3's own
   * {@code certificate_required}. Either way the refusal is named, and it is a refusal. jetcd retries a failed
   * handshake once before it reports it, so the other refusal tests here take 1.5 to 2.7 s each. With a 2 s start
   * timeout, this test (the class's first, paying the JVM's cold TLS start) once timed out with its first attempt
   * still pending (3.4.23, a loaded clean-clone suite of 20d8f3f): the start timeouts are 20 s, and each refusal is
   * checked to come well before that.
   */
  @Test
  void withoutAClientCertificateEtcdRefusesTheConnection() {
    String alert = EtcdBinary.runningVersion().atLeast(3, 5) ? "certificate_required" : "bad_certificate";
    EtcdConfig serverOnly = config().tls(PKI.ca(), null, null).build();
    long started = System.nanoTime();
    try (EtcdRegistry registry = EtcdRegistry.connect(serverOnly)) {
      assertThatThrownBy(() -> registry.register(Instance.of(service, "127.0.0.1", 8080).id("c"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).startTimeout(Duration.ofSeconds(20)).build()))
          .isInstanceOf(AccessDeniedException.class)
          .as("names the TLS cause").hasMessageContaining("TLS: Received fatal alert: " + alert)
          .satisfies(e -> System.out.println("[tls IT] no client certificate: " + e.getMessage()));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("refused, not retried until the start timeout")
        .isLessThan(Duration.ofSeconds(15));
  }

  @Test
  void anExpiredClientCertificateIsRefusedAtOnceNamingTheCause() {
    TestPki.Pair expired = PKI.expiredClient("orders");
    EtcdConfig config = config().tls(PKI.ca(), expired.certificate(), expired.key()).build();
    long started = System.nanoTime();
    try (EtcdRegistry registry = EtcdRegistry.connect(config)) {
      assertThatThrownBy(() -> registry.register(Instance.of(service, "127.0.0.1", 8080).id("d"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).startTimeout(Duration.ofSeconds(20)).build()))
          .isInstanceOf(AccessDeniedException.class).hasMessageContaining("TLS: ")
          .satisfies(e -> System.out.println("[tls IT] expired client certificate: " + e.getMessage()));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).as("refused, not retried until the start timeout")
        .isLessThan(Duration.ofSeconds(15));
    assertNothingRegistered();
  }

  @Test
  void aCertificateForAnotherHostNameIsRefusedNamingTheMismatch() {
    EtcdConfig config = config().authority("etcd.elsewhere.example").build();
    try (EtcdRegistry registry = EtcdRegistry.connect(config)) {
      assertThatThrownBy(() -> registry.list("default", service)).isInstanceOf(AccessDeniedException.class)
          .hasMessageContaining("TLS: ").hasMessageContaining("etcd.elsewhere.example")
          .satisfies(e -> System.out.println("[tls IT] host name mismatch: " + e.getMessage()));
    }
  }

  @Test
  void aKeyThatDoesNotMatchTheCertificateIsRefused() {
    EtcdConfig config = config().tls(PKI.ca(), PKI.client("orders").certificate(), PKI.client("billing").key())
        .build();
    assertThatThrownBy(() -> {
      try (EtcdRegistry registry = EtcdRegistry.connect(config)) {
        registry.register(Instance.of(service, "127.0.0.1", 8080).id("e"),
            RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).startTimeout(Duration.ofSeconds(20)).build());
      }
    }).satisfies(e -> System.out.println("[tls IT] mismatched key: " + e.getMessage()))
        .isInstanceOfAny(AccessDeniedException.class, dev.muster.InvalidInputException.class);
    assertNothingRegistered();
  }

  private void assertNothingRegistered() {
    try (EtcdRegistry good = EtcdRegistry.connect(config().build())) {
      assertThat(good.list("default", service).instances()).isEmpty();
    }
  }

  @Test
  void aKeyFileThatIsNotAKeyFailsConnectNamingTheTlsSettings() throws Exception {
    Path garbage = Files.writeString(Files.createTempFile("muster-tls-it-", "-key.pem"), "not a key\n");
    EtcdConfig bad = config().tls(PKI.ca(), PKI.client("orders").certificate(), garbage).build();

    assertThatThrownBy(() -> EtcdRegistry.connect(bad)).isInstanceOf(dev.muster.InvalidInputException.class)
        .hasMessageStartingWith("tls ").hasMessageContaining(garbage.toString())
        .hasMessageContaining("PKCS#8 and matching the certificate");
  }
}
