package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.testing.EtcdCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd's simple tokens expire after {@code --auth-token-ttl} unused (2 s here). A registration whose keepalives
 * come every 3 s and a cache on an idle watch outlive their token again and again for 30 s: each authenticated
 * call after a gap (an update, a new cache's range and watch) finds its token expired, jetcd fetches a new one, and
 * neither the lease nor the cache ever notices.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class TokenExpiryIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().authTokenTtl(Duration.ofSeconds(2)).build();

  private static final String SERVICE = "tokens";

  @Test
  void aRegistrationAndACacheRideThroughTokenExpiryFor30Seconds() throws Exception {
    Path password = Files.createTempFile("muster-token-it-", ".pw");
    Files.writeString(password, "app-secret\n");
    EtcdConfig root = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("root", etcd.rootPasswordFile()).build();
    try (EtcdAuth auth = EtcdAuth.connect(root)) {
      auth.addUser("app", "app-secret");
      auth.grantProvider("default", SERVICE, "app", null);
    }
    ChangeLog changes = new ChangeLog();
    EventRecorder events = new EventRecorder();
    EtcdConfig app = EtcdConfig.builder().endpoints(etcd.endpointsString()).credentials("app", password).build();
    try (EtcdRegistry registry = EtcdRegistry.connect(app)) {
      Registration registration = registry.register(Instance.of(SERVICE, "127.0.0.1", 9001).id("a"),
          RegistrarConfig.builder().ttl(Duration.ofSeconds(9)).shutdownHook(false).build(), events);
      long lease = registration.leaseId();
      EndpointCache cache = registry.watch(CacheConfig.builder(SERVICE).build(), changes);
      assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
      EndpointCache late = null;
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      int weight = 1;
      while (System.nanoTime() < end) {
        Thread.sleep(3_000); // longer than the token lives
        int next = ++weight;
        registration.update(i -> i.weight(next)).get(10, TimeUnit.SECONDS);
        if (late == null && weight == 5) {
          late = registry.watch(CacheConfig.builder(SERVICE).build());
        }
      }
      int last = weight;
      await().atMost(Duration.ofSeconds(10))
          .until(() -> cache.current().instances().get(0).weight() == last);

      assertThat(etcd.member(0).logSays("invalid auth token")).as("tokens did expire and were refused").isTrue();
      assertThat(registration.leaseId()).isEqualTo(lease);
      assertThat(events.types()).as("no lease loss, no unreachable period")
          .containsOnly(RegistrationEvent.Type.REGISTERED, RegistrationEvent.Type.UPDATED);
      assertThat(changes.lines()).as("the cache never went stale").allMatch(l -> l.startsWith("SNAPSHOT")
          || l.startsWith("UPDATE"));
      assertThat(cache.isStale()).isFalse();
      assertThat(late).isNotNull();
      assertThat(late.awaitReady(Duration.ofSeconds(10))).isTrue();
      assertThat(late.current().instances().get(0).weight()).isEqualTo(last);
    }
  }
}
