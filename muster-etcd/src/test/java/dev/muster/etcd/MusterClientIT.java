package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.call.NoEndpointException;
import dev.muster.client.MusterClient;
import dev.muster.registry.Instance;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link MusterClient} on a real etcd member, reached through a fault proxy so a test can keep the first set from
 * arriving. The attempt is transport-neutral: it answers with the target's id, so no provider process is needed.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MusterClientIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private ProxiedEtcd fixture;
  private FaultProxy proxy;
  private EtcdRegistry viaProxy;
  private PlainEtcdWriter registry;

  private static final Attempt<String> ID = (target, timeout) ->
      CompletableFuture.completedFuture(AttemptResult.success(target.id()));

  @BeforeEach
  void setUp() {
    fixture = new ProxiedEtcd(etcd);
    proxy = fixture.proxy;
    viaProxy = fixture.viaProxy;
    registry = fixture.writer;
  }

  @AfterEach
  void tearDown() {
    fixture.close();
  }

  private CacheConfig config() {
    return CacheConfig.builder(registry.service).backoff(Duration.ofMillis(100), Duration.ofSeconds(1)).build();
  }

  @Test
  void aCallMadeWhileEtcdIsUnreachableWaitsForTheFirstSetAndRunsWhenEtcdAnswers() throws Exception {
    registry.put(registry.instance(1));
    proxy.cut();
    try (MusterClient client = MusterClient.builder(viaProxy).cache(config())
        .firstSetTimeout(Duration.ofSeconds(60)).build()) {
      CompletableFuture<CallResult<String>> call = client.call(ID, Idempotent.YES);
      assertThat(client.isReady()).isFalse();
      assertThat(call).isNotDone();

      proxy.pass();

      CallResult<String> r = call.get(30, TimeUnit.SECONDS);
      assertThat(r.ok()).as("%s", r).isTrue();
      assertThat(r.value()).isEqualTo("i1");
    }
  }

  @Test
  void withoutAFirstSetWithinTheTimeoutACallFailsWithNoEndpointNamingTheService() throws Exception {
    proxy.cut();
    try (MusterClient client = MusterClient.builder(viaProxy).cache(config())
        .firstSetTimeout(Duration.ofMillis(300)).build()) {
      CallResult<String> r = client.call(ID, Idempotent.YES).get(30, TimeUnit.SECONDS);

      assertThat(r.failure()).isInstanceOf(NoEndpointException.class)
          .hasMessageContaining(registry.service).hasMessageContaining("300 ms");
    }
  }

  @Test
  void callsFollowTheRegistryAndCloseClosesTheCache() throws Exception {
    Instance one = registry.instance(1);
    registry.put(one);
    registry.put(registry.instance(2));
    MusterClient client = MusterClient.builder(viaProxy).service(registry.service).build();
    Set<String> seen = new HashSet<>();
    await().atMost(Duration.ofSeconds(20)).until(() -> {
      seen.add(client.call(ID, Idempotent.YES).get(10, TimeUnit.SECONDS).value());
      return seen.size() == 2;
    });

    registry.delete(one);

    await().atMost(Duration.ofSeconds(20)).until(() -> client.balancer().endpoints().size() == 1);
    for (int i = 0; i < 20; i++) {
      assertThat(client.call(ID, Idempotent.YES).get(10, TimeUnit.SECONDS).value()).isEqualTo("i2");
    }
    client.close();
    assertThatThrownBy(() -> client.cache().addListener((set, delta) -> { }))
        .as("the cache the client opened is closed").isInstanceOf(IllegalStateException.class);
  }
}
