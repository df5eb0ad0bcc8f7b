package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The listener contract on a real cache: listeners added from four threads while etcd streams events into it each
 * get one SNAPSHOT first, then every later change once, in strictly increasing revisions, and end on the cache's
 * own set.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ListenerContractIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void listenersAddedWhileEventsStreamInEachSeeOneSnapshotThenEveryChangeInOrder() throws Exception {
    RegistryLayout layout = RegistryLayout.defaults();
    ConcurrentLinkedQueue<PublicationLog> logs = new ConcurrentLinkedQueue<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    try (Oracle oracle = new Oracle(etcd.endpoints(), Duration.ofSeconds(30));
         EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      EndpointCache cache = registry.watch(CacheConfig.builder("orders").build());
      assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
      Thread writer = new Thread(() -> {
        Random r = new Random(1);
        while (writing.get()) {
          Instance i = Instance.of("orders", "10.0.0.1", 8000 + r.nextInt(30)).id("i" + r.nextInt(30))
              .weight(1 + r.nextInt(100));
          if (r.nextInt(3) == 0) {
            oracle.delete(layout.instanceKey(i));
          } else {
            oracle.put(layout.instanceKey(i), InstanceCodec.encode(i));
          }
        }
      }, "writer");
      writer.start();
      List<Thread> adders = new ArrayList<>();
      for (int a = 0; a < 4; a++) {
        Random r = new Random(100 + a);
        Thread t = new Thread(() -> {
          for (int n = 0; n < 25; n++) {
            PublicationLog log = new PublicationLog("listener", p -> { });
            logs.add(log);
            cache.addListener(log);
            Oracle.sleep(Duration.ofMillis(r.nextInt(60)));
          }
        }, "adder-" + a);
        adders.add(t);
        t.start();
      }
      for (Thread t : adders) {
        t.join();
      }
      writing.set(false);
      writer.join();
      long last = oracle.revision(); // the last write: nothing else writes to this etcd
      await().atMost(Duration.ofSeconds(30)).until(() -> cache.revision() >= last);
      await().atMost(Duration.ofSeconds(30)).until(() -> logs.stream().allMatch(l -> l.lastRevision() == last));

      assertThat(logs).hasSize(100).allSatisfy(l -> assertThat(l.breaches()).isEmpty());
      long publications = logs.stream().mapToLong(PublicationLog::publications).sum();
      System.out.printf("100 listeners added during %d revisions of writes: %d deliveries, no breach%n", last,
          publications);
    }
  }
}
