package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every cache and registration of one {@link EtcdRegistry} shares its connection. A cache that etcd refuses (here:
 * an etcd user without read permission on the service) stops for good, with the refusal as its failure, instead
 * of retrying forever; and it never replaces that shared connection: the other cache keeps its watch and the
 * registration its lease.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class SharedConnectionIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final String ROOT_PASSWORD = "root-secret";
  private static final String APP_PASSWORD = "app-secret";
  private static final RegistryLayout LAYOUT = RegistryLayout.defaults();

  @Test
  void aCacheEtcdRefusesStopsForGoodAndDisturbsNeitherTheOtherCacheNorTheRegistration() throws Exception {
    String allowed = "orders";
    String refused = "billing";
    enableAuthWithAnAppUserAllowedOnly(allowed);
    ChangeLog allowedLog = new ChangeLog();
    ChangeLog refusedLog = new ChangeLog();
    EventRecorder registrationEvents = new EventRecorder();
    long refusedBefore = refusedRanges();

    try (Client root = rootClient();
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString())
             .withCredentials("app", APP_PASSWORD))) {
      // Deadlines with room for a loaded machine: the suite saw this test's JVM or etcd pause for about 2 s while
      // muster-cli's heaviest classes started beside it (see the registration below).
      EndpointCache good = muster.watch(CacheConfig.builder(allowed).progressInterval(Duration.ofSeconds(1))
          .progressTimeout(Duration.ofSeconds(5)).build(), allowedLog);
      assertThat(good.awaitReady(Duration.ofSeconds(20))).isTrue();
      // TTL 10 s: with 2 s (keepalive 500 ms, so a 500 ms deadline per keepalive) a fresh-clone suite run lost the
      // lease (LEASE_LOST, REREGISTERED, UNREACHABLE, RECONNECTED) while the connection was never replaced and the
      // bad cache made one refused range: a pause of the machine, not the bad cache.
      Registration registration = muster.register(Instance.of(allowed, "127.0.0.1", 9001).id("kept"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(10)).keepaliveInterval(Duration.ofSeconds(1))
              .shutdownHook(false).build(), registrationEvents);
      long lease = registration.leaseId();

      EndpointCache bad = muster.watch(CacheConfig.builder(refused).backoff(Duration.ofMillis(20),
          Duration.ofMillis(100)).build(), refusedLog);
      long last = 0;
      for (int i = 0; i < 40; i++) { // 8 s of writes the good cache must follow while the bad one keeps failing
        last = put(root, Instance.of(allowed, "127.0.0.1", 9100 + i).id("w" + i));
        Thread.sleep(200);
      }
      long wanted = last;
      await().atMost(Duration.ofSeconds(20)).until(() -> good.revision() >= wanted);

      assertThat(bad.awaitReady(Duration.ZERO)).isFalse();
      assertThat(bad.failure()).get().satisfies(f -> {
        assertThat(f.code()).isEqualTo(dev.muster.ErrorCode.PERMISSION_DENIED);
        assertThat(f.getMessage()).contains("etcd user \"app\"", "/muster/default/billing/", "needs read on");
      });
      assertThat(refusedLog.lines()).anySatisfy(l -> assertThat(l).startsWith("FAILED").contains("permission denied"));
      assertThat(refusedRanges() - refusedBefore).as("ranges etcd refused to the bad cache: one, no retry loop")
          .isEqualTo(1);
      assertThat(muster.reconnects()).as("the shared connection was never replaced").isZero();
      assertThat(allowedLog.lines()).as("the good cache never went stale or resynced")
          .allMatch(l -> l.startsWith("UPDATE") || l.startsWith("SNAPSHOT"));
      assertThat(good.resyncCount()).isZero();
      assertThat(good.current().size()).isEqualTo(41);
      // The registration keeps its lease. A keepalive that misses its 1 s deadline on a loaded machine reports
      // UNREACHABLE and then RECONNECTED on the same lease and, as reconnects() shows, the same connection.
      assertThat(registrationEvents.types()).as("registration events: %s", registrationEvents.events())
          .contains(RegistrationEvent.Type.REGISTERED).doesNotContain(RegistrationEvent.Type.LEASE_LOST,
              RegistrationEvent.Type.REREGISTERED, RegistrationEvent.Type.FAILED);
      assertThat(registration.leaseId()).isEqualTo(lease);
    }
  }

  /** root (role root) and app, whose one role may read and write {@code service}'s prefix and nothing else. */
  private static void enableAuthWithAnAppUserAllowedOnly(String service) throws Exception {
    try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(URI[]::new)).build()) {
      Auth auth = c.getAuthClient();
      auth.userAdd(bytes("root"), bytes(ROOT_PASSWORD)).get(10, TimeUnit.SECONDS);
      auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
      String prefix = LAYOUT.servicePrefix("default", service);
      auth.roleAdd(bytes("app-role")).get(10, TimeUnit.SECONDS);
      auth.roleGrantPermission(bytes("app-role"), bytes(prefix), prefixEnd(prefix), Permission.Type.READWRITE)
          .get(10, TimeUnit.SECONDS);
      auth.userAdd(bytes("app"), bytes(APP_PASSWORD)).get(10, TimeUnit.SECONDS);
      auth.userGrantRole(bytes("app"), bytes("app-role")).get(10, TimeUnit.SECONDS);
      auth.authEnable().get(10, TimeUnit.SECONDS);
    }
  }

  private static Client rootClient() {
    return Client.builder().endpoints(etcd.endpoints().toArray(URI[]::new)).user(bytes("root"))
        .password(bytes(ROOT_PASSWORD)).build();
  }

  private static long put(Client c, Instance i) throws Exception {
    return c.getKVClient().put(bytes(LAYOUT.instanceKey(i)), ByteSequence.from(InstanceCodec.encode(i)))
        .get(10, TimeUnit.SECONDS).getHeader().getRevision();
  }

  /** Ranges etcd answered with PermissionDenied, from its own gRPC metrics. */
  private static long refusedRanges() throws Exception {
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(etcd.member(0).clientUrl()
        .resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = Pattern.compile("grpc_server_handled_total\\{[^}]*grpc_code=\"PermissionDenied\"[^}]*"
        + "grpc_method=\"Range\"[^}]*} (\\d+)").matcher(metrics);
    return m.find() ? Long.parseLong(m.group(1)) : 0;
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static ByteSequence prefixEnd(String prefix) {
    byte[] b = prefix.getBytes(StandardCharsets.UTF_8);
    b[b.length - 1]++;
    return ByteSequence.from(b);
  }
}
