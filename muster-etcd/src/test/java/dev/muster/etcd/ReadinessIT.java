package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.balance.EndpointState;
import dev.muster.cache.CacheConfig;
import dev.muster.client.MusterClient;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A provider registered STARTING is in every cache but gets no picks until ready(); notReady() takes it out again. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReadinessIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final RegistrarConfig CONFIG = RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
      .keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO).shutdownHook(false).build();

  private final String service = "ready-" + UUID.randomUUID().toString().substring(0, 8);
  private EtcdRegistry registry;

  @BeforeEach
  void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
  }

  @AfterEach
  void close() {
    registry.close();
  }

  private Set<String> picks(MusterClient client, int n) {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < n; i++) {
      EndpointState e = client.balancer().pick();
      ids.add(e == null ? "none" : e.instance().id());
    }
    return ids;
  }

  @Test
  void aStartingProviderIsSeenButNotPickedUntilReadyAndNotReadyTakesItOutWithoutDeregistering() throws Exception {
    registry.register(Instance.of(service, "127.0.0.1", 9001).id("a"), CONFIG);
    Registration b = registry.register(Instance.of(service, "127.0.0.1", 9002).id("b")
        .state(InstanceState.STARTING), CONFIG);
    try (MusterClient client = MusterClient.builder(registry).service(service)
        .cache(CacheConfig.builder(service).build()).build()) {
      assertThat(client.awaitReady(Duration.ofSeconds(10))).isTrue();
      await("both in the set").atMost(Duration.ofSeconds(10))
          .until(() -> client.cache().current().size() == 2);
      assertThat(client.cache().current().instances()).anyMatch(i -> i.id().equals("b")
          && i.state() == InstanceState.STARTING);
      assertThat(picks(client, 200)).containsExactly("a");

      assertThat(b.ready().get(10, TimeUnit.SECONDS).state()).isEqualTo(InstanceState.UP);
      await("b picked once it is UP").atMost(Duration.ofSeconds(10))
          .until(() -> picks(client, 200).contains("b"));

      long lease = b.leaseId();
      b.notReady().get(10, TimeUnit.SECONDS);
      await("b out again").atMost(Duration.ofSeconds(10)).until(() -> picks(client, 200).equals(Set.of("a")));
      assertThat(b.leaseId()).as("same lease: still registered").isEqualTo(lease);
      assertThat(registry.list("default", service).instances()).extracting(Instance::id)
          .containsExactlyInAnyOrder("a", "b");
    }
  }
}
