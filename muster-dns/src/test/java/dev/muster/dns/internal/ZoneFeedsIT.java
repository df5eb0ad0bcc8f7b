package dev.muster.dns.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.ServiceDirectory;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.Name;

/**
 * A cache is ready when it holds its first set, but the zone has the service's records only once the cache's
 * listener has run. Here every delivery waits 500 ms, as a delivery pool behind a loaded machine would: when
 * {@code awaitPublished} returns, the zone must already serve the service. (Waiting for the caches alone returned at once,
 * with the zone still empty: the suite saw the JDK's resolver get NXDOMAIN for a service of three instances.)
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ZoneFeedsIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void awaitPublishedReturnsOnlyOnceTheFirstSetsAreInTheZone() throws Exception {
    Executor slow = task -> new Thread(() -> {
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      task.run();
    }, "slow-delivery").start();
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
         Registration r = registry.register(Instance.of("orders", "127.0.0.11", 8080).id("o1"),
             RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build())) {
      NamespaceZone zone = new NamespaceZone("default", Name.fromString("muster."), 5, 1, Clock.systemUTC());
      ZoneFeeds feeds = new ZoneFeeds(Map.of("default", zone), 5, 1, null, TxtMetadata.NONE,
          Clock.systemUTC());
      try (ServiceDirectory directory = ServiceDirectory.builder(registry, feeds).namespaces(List.of("default"))
          .cache(b -> b.listenerExecutor(slow)).start()) {
        assertThat(directory.awaitListed(Duration.ofSeconds(20))).isTrue();
        assertThat(feeds.awaitPublished(directory.caches().keySet(), Duration.ofSeconds(20))).isTrue();
        assertThat(zone.serviceNames()).as("served when awaitPublished returned").containsExactly("orders");
      }
    }
  }
}
