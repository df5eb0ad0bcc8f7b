package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.AccessDeniedException;
import dev.muster.ErrorCode;
import dev.muster.InvalidInputException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.Status;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Muster on a secured etcd: TLS with client certificates, etcd authentication on, and roles made by
 * {@link EtcdAuth}. Users log in by password ({@code pa}, {@code pb}, {@code ca}) or by their certificate's CN
 * ({@code qa}); root by its certificate.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class AuthIT {
  private static final Path DIR = TempDirs.create("muster-auth-it-");
  private static final TestPki PKI = TestPki.create(DIR.resolve("pki"));

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).tls(PKI).auth().build();

  private static final String A = "orders";
  private static final String B = "billing";
  private static Path password;

  @BeforeAll
  static void roles() throws IOException {
    password = Files.writeString(DIR.resolve("user-password"), "users-secret\n");
    try (EtcdAuth auth = EtcdAuth.connect(root())) {
      for (String user : new String[] {"pa", "pb", "ca", "qa", "p1", "p2"}) {
        auth.addUser(user, "users-secret");
      }
      auth.grantProvider("default", A, "pa", null);
      auth.grantProvider("default", A, "qa", null);
      auth.grantProvider("default", B, "pb", null);
      auth.grantConsumer("default", A, "ca");
      auth.grantProvider("default", A, "p1", new InstanceKey("default", A, "v1", "i1"));
      auth.grantProvider("default", A, "p2", new InstanceKey("default", A, "v1", "i2"));
    }
  }

  /** Root by its client certificate (CN root): no password. */
  private static EtcdConfig root() {
    TestPki.Pair cert = PKI.client("root");
    return EtcdConfig.builder().endpoints(etcd.endpointsString()).tls(PKI.ca(), cert.certificate(), cert.key())
        .build();
  }

  /** {@code user} by password, over TLS with a certificate whose CN is nobody's (the password decides). */
  private static EtcdConfig user(String user) {
    TestPki.Pair cert = PKI.client("muster-test-client");
    return EtcdConfig.builder().endpoints(etcd.endpointsString()).tls(PKI.ca(), cert.certificate(), cert.key())
        .credentials(user, password).build();
  }

  private static RegistrarConfig quick() {
    return RegistrarConfig.builder().ttl(Duration.ofSeconds(3)).startTimeout(Duration.ofSeconds(20))
        .shutdownHook(false).build();
  }

  @Test
  void grantsAreIdempotentAndListed() {
    try (EtcdAuth auth = EtcdAuth.connect(root())) {
      assertThat(auth.enable()).as("already enabled").isEmpty();
      assertThat(auth.grantProvider("default", A, "pa", null)).as("granted before").isEmpty();
      EtcdAuth.Listing listing = auth.list();
      assertThat(listing.authEnabled()).isTrue();
      assertThat(listing.users()).anySatisfy(u -> {
        assertThat(u.name()).isEqualTo("pa");
        assertThat(u.roles()).containsExactly("muster-provider:/muster/default/orders/");
      });
      assertThat(listing.roles()).anySatisfy(r -> {
        assertThat(r.name()).isEqualTo("muster-provider:/muster/default/orders/v1/i1");
        assertThat(r.permissions()).containsExactly("readwrite /muster/default/orders/v1/i1");
      });
      assertThatThrownBy(() -> auth.grantConsumer("default", A, "nobody")).isInstanceOf(InvalidInputException.class)
          .hasMessageContaining("nobody").hasMessageContaining("no such user");
    }
  }

  @Test
  void aProviderOfAWorksAndCannotRegisterB() {
    try (EtcdRegistry registry = EtcdRegistry.connect(user("pa"))) {
      Registration a = registry.register(Instance.of(A, "127.0.0.1", 9001).id("pa-1"), quick());
      assertThat(a.leaseId()).isNotZero();
      assertThatThrownBy(() -> registry.register(Instance.of(B, "127.0.0.1", 9002).id("pa-2"), quick()))
          .isInstanceOfSatisfying(AccessDeniedException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED))
          .hasMessageContaining("etcd user \"pa\" may not write /muster/default/billing/v1/pa-2")
          .hasMessageContaining("readwrite on /muster/default/billing/v1/pa-2 or on its service prefix"
              + " /muster/default/billing/");
    }
    assertThat(rootList(B)).isEmpty();
  }

  @Test
  void aUserNamedByItsCertificateNeedsNoPassword() {
    TestPki.Pair qa = PKI.client("qa");
    EtcdConfig byCertificate = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .tls(PKI.ca(), qa.certificate(), qa.key()).build();
    assertThat(byCertificate.identity()).isEqualTo("etcd user \"qa\" (client certificate CN)");
    try (EtcdRegistry registry = EtcdRegistry.connect(byCertificate)) {
      registry.register(Instance.of(A, "127.0.0.1", 9003).id("qa-1"), quick());
      assertThatThrownBy(() -> registry.register(Instance.of(B, "127.0.0.1", 9004).id("qa-2"), quick()))
          .isInstanceOf(AccessDeniedException.class).hasMessageContaining("etcd user \"qa\" (client certificate CN)");
    }
  }

  @Test
  void perInstanceGrantsStopOneProviderFromTouchingAnothersRecord() throws Exception {
    try (EtcdRegistry one = EtcdRegistry.connect(user("p1"));
         EtcdRegistry two = EtcdRegistry.connect(user("p2"))) {
      one.register(Instance.of(A, "127.0.0.1", 9011).id("i1"), quick());
      two.register(Instance.of(A, "127.0.0.1", 9012).id("i2"), quick());
      assertThatThrownBy(() -> one.register(Instance.of(A, "127.0.0.1", 9013).id("i2"), quick()))
          .as("p1 registering under p2's id").isInstanceOf(AccessDeniedException.class)
          .hasMessageContaining("/muster/default/orders/v1/i2");
      String i2 = "/muster/default/orders/v1/i2";
      try (Client p1 = jetcd("p1")) {
        assertDenied(() -> p1.getKVClient().delete(bytes(i2)).get(10, TimeUnit.SECONDS));
        assertDenied(() -> p1.getKVClient().put(bytes(i2), ByteSequence.from(InstanceCodec.encode(
            Instance.of(A, "10.6.6.6", 6666).id("i2")))).get(10, TimeUnit.SECONDS));
      }
      assertThat(rootList(A)).filteredOn(i -> i.id().equals("i2")).singleElement()
          .satisfies(i -> assertThat(i.address()).isEqualTo("127.0.0.1"));
    }
  }

  @Test
  void aConsumerReadsItsServiceButCannotRegisterOrReadAnother() {
    try (EtcdRegistry registry = EtcdRegistry.connect(user("ca"))) {
      assertThat(registry.list("default", A).instances()).isNotNull();
      assertThatThrownBy(() -> registry.register(Instance.of(A, "127.0.0.1", 9021).id("ca-1"), quick()))
          .isInstanceOf(AccessDeniedException.class).hasMessageContaining("etcd user \"ca\" may not write");
      assertThatThrownBy(() -> registry.list("default", B)).isInstanceOf(AccessDeniedException.class)
          .hasMessageContaining("needs read on /muster/default/billing/");

      EndpointCache denied = registry.watch(CacheConfig.builder(B).build());
      await().atMost(Duration.ofSeconds(20)).until(() -> denied.failure().isPresent());
      assertThat(denied.failure().get().code()).isEqualTo(ErrorCode.PERMISSION_DENIED);
      assertThat(denied.awaitReady(Duration.ofSeconds(1))).isFalse();
      assertThat(denied.isStale()).isTrue();
      EndpointCache allowed = registry.watch(CacheConfig.builder(A).build());
      assertThat(allowed.awaitReady(Duration.ofSeconds(20))).isTrue();
      assertThat(allowed.failure()).isEmpty();
    }
  }

  @Test
  void aWrongPasswordFailsAtOnceNamingTheUser() throws IOException {
    Path wrong = Files.writeString(DIR.resolve("wrong-password"), "not-it\n");
    EtcdConfig config = user("pa").toBuilder().credentials("pa", wrong).build();
    long started = System.nanoTime();
    try (EtcdRegistry registry = EtcdRegistry.connect(config)) {
      assertThatThrownBy(() -> registry.register(Instance.of(A, "127.0.0.1", 9031).id("wrong-pw"), quick()))
          .isInstanceOfSatisfying(AccessDeniedException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.AUTHENTICATION_FAILED))
          .hasMessageContaining("etcd did not accept etcd user \"pa\"")
          .hasMessageContaining("authentication failed")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("not-it"));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
    assertThat(rootList(A)).noneMatch(i -> i.id().equals("wrong-pw"));
  }

  private static java.util.List<Instance> rootList(String service) {
    try (EtcdRegistry root = EtcdRegistry.connect(root())) {
      return root.list("default", service).instances();
    }
  }

  private static Client jetcd(String user) {
    TestPki.Pair cert = PKI.client("muster-test-client");
    try {
      return Client.builder().endpoints(etcd.endpoints().toArray(java.net.URI[]::new))
          .sslContext(io.grpc.netty.GrpcSslContexts.forClient().trustManager(PKI.ca().toFile())
              .keyManager(cert.certificate().toFile(), cert.key().toFile()).build())
          .user(bytes(user)).password(bytes("users-secret")).build();
    } catch (javax.net.ssl.SSLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertDenied(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
    assertThatThrownBy(call).isInstanceOf(ExecutionException.class).cause()
        .satisfies(c -> assertThat(Status.fromThrowable(c).getCode()).isEqualTo(Status.Code.PERMISSION_DENIED));
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
