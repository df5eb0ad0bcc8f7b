package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.RegistryUnavailableException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What {@link EtcdRegistry#close()} does with the registrations and caches made through it. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdRegistryCloseIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  /** TTL 3 s, keepalive 1 s, drain 1 s. */
  private static final RegistrarConfig DRAIN_1S = RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
      .keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ofSeconds(1)).shutdownHook(false).build();

  private static final RegistryLayout LAYOUT = RegistryLayout.defaults();

  private String service;

  @BeforeEach
  void name() {
    service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private Instance instance(int n) {
    return Instance.of(service, "10.0.0." + (n + 1), 8080).id("i" + n);
  }

  @Test
  void closingTheRegistryDrainsEveryRegistrationAtOnceThenRevokesThem() {
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    List<Registration> rs = IntStream.range(0, 4).mapToObj(n -> registry.register(instance(n), DRAIN_1S)).toList();

    long start = System.nanoTime();
    registry.close();
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    System.out.println("closing 4 registrations with a 1 s drain took " + took.toMillis() + " ms");
    assertThat(took).as("one drain, not four one after another").isLessThan(Duration.ofMillis(3500));
    assertThat(rs).allSatisfy(r -> assertThat(r.state()).isEqualTo(RegistrationState.CLOSED));
    try (Etcd check = new Etcd(etcd.endpoints())) {
      for (int n = 0; n < 4; n++) {
        assertThat(check.get(LAYOUT.instanceKey(instance(n)))).isEmpty();
      }
    }
  }

  @Test
  void aRegistrationOrCacheClosedByItsUserLeavesTheRegistry() {
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      Registration kept = registry.register(instance(0), DRAIN_1S.toBuilder().drain(Duration.ZERO).build());
      Registration closed = registry.register(instance(1), DRAIN_1S.toBuilder().drain(Duration.ZERO).build());
      EndpointCache cache = registry.watch(CacheConfig.builder(service).build());
      EndpointCache keptCache = registry.watch(CacheConfig.builder(service).build());
      assertThat(registry.openRegistrations()).containsExactly(kept, closed);
      assertThat(registry.openCaches()).containsExactly(cache, keptCache);

      closed.close();
      cache.close();

      await().atMost(Duration.ofSeconds(5)).until(() -> registry.openRegistrations().equals(List.of(kept)));
      assertThat(registry.openCaches()).containsExactly(keptCache);
    }
  }

  @Test
  void aLeaseTheRegistryCouldNotRevokeIsReportedNamingItsKey() {
    try (FaultProxy proxy = FaultProxy.to(etcd.member(0).clientUrl())) {
      EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(proxy.uri().toString()));
      Instance instance = instance(0);
      Registration r = registry.register(instance, RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
          .requestTimeout(Duration.ofMillis(500)).drain(Duration.ZERO).shutdownHook(false).build());
      proxy.cut();

      assertThatThrownBy(registry::close).isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("could not revoke 1 of 1 registration(s)")
          .hasMessageContaining(LAYOUT.instanceKey(instance));
      assertThat(r.state()).isEqualTo(RegistrationState.CLOSED);
    }
  }
}
