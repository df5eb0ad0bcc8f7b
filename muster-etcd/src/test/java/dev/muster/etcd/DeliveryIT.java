package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.internal.DeliveryPool;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 19 §2 and §4 on a real etcd: caches share the process's delivery pool instead of owning two threads each,
 * and a listener that falls behind gets the newest set with the combined delta while its cache keeps up.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DeliveryIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private EtcdRegistry registry;
  private PlainEtcdWriter writer;

  @BeforeEach
  void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    writer = new PlainEtcdWriter(etcd.endpoints(), "svc-" + UUID.randomUUID().toString().substring(0, 8));
  }

  @AfterEach
  void close() {
    registry.close();
    writer.close();
  }

  private static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count();
  }

  @Test
  void fiftyCachesShareTheDeliveryPoolAndEachSeesEveryInstance() {
    long before = Thread.activeCount();
    List<EndpointCache> caches = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      caches.add(registry.watch(CacheConfig.builder(writer.service).build()));
    }
    for (EndpointCache c : caches) {
      assertThat(c.awaitReady(Duration.ofSeconds(20))).isTrue();
    }
    long last = 0;
    for (int i = 1; i <= 5; i++) {
      last = writer.put(writer.instance(i));
    }
    for (EndpointCache c : caches) {
      writer.awaitMatches(c, last, Duration.ofSeconds(20));
    }

    System.out.println("threads: " + Thread.getAllStackTraces().keySet().stream()
        .collect(java.util.stream.Collectors.groupingBy(t -> t.getName().replaceAll("[0-9]+", "N"),
            java.util.TreeMap::new, java.util.stream.Collectors.counting())));
    assertThat(threadsNamed("muster-cache-")).as("no cache owns a loop or notifier thread (50 caches used 100)")
        .isLessThanOrEqualTo(1); // the shared timer, muster-cache-timer
    assertThat(threadsNamed("muster-delivery-")).as("the pool and its spares for blocked ranges")
        .isLessThanOrEqualTo(DeliveryPool.PARALLELISM + DeliveryPool.MAX_SPARES);
    System.out.printf("50 caches: %d more threads, of them %d delivery threads%n", Thread.activeCount() - before,
        threadsNamed("muster-delivery-"));
  }

  @Test
  void aListenerThatFallsBehindGetsTheNewestSetWithTheCombinedDeltaWhileItsCacheKeepsUp() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<EndpointDelta> heard = new CopyOnWriteArrayList<>();
    Map<InstanceKey, Instance> rebuilt = new java.util.concurrent.ConcurrentHashMap<>();
    List<String> breaches = new CopyOnWriteArrayList<>();
    EndpointListener slow = new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        heard.add(delta);
        if (heard.size() == 1) {
          waitFor(release); // blocked in its first call (the SNAPSHOT) while the writes go on
        }
        delta.removed().forEach(i -> rebuilt.remove(i.key()));
        delta.added().forEach(i -> rebuilt.put(i.key(), i));
        delta.changed().forEach(i -> rebuilt.put(i.key(), i));
        if (!rebuilt.equals(set.asMap())) {
          breaches.add("the deltas up to " + set.revision() + " do not rebuild its set");
        }
      }
    };
    EndpointCache cache = registry.watch(CacheConfig.builder(writer.service).build(), slow);
    assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
    long last = 0;
    for (int i = 1; i <= 60; i++) {
      last = writer.put(writer.instance(i)); // 60 revisions, one instance each
    }
    for (int i = 1; i <= 60; i += 3) {
      last = writer.delete(writer.instance(i));
    }
    writer.awaitMatches(cache, last, Duration.ofSeconds(20)); // the cache kept up with its listener blocked
    release.countDown();
    long revision = last;
    await().atMost(Duration.ofSeconds(20)).until(() -> !heard.isEmpty()
        && rebuilt.size() == cache.current().size() && cache.current().revision() == revision);

    assertThat(breaches).isEmpty();
    assertThat(heard.get(0).kind()).isEqualTo(EndpointDelta.Kind.SNAPSHOT);
    assertThat(heard).as("80 revisions while blocked reach it in at most 1 + 8 calls, the last merged")
        .hasSizeLessThanOrEqualTo(1 + dev.muster.cache.internal.CacheNotifier.MAX_BEHIND);
    assertThat(rebuilt).isEqualTo(cache.current().asMap());
    assertThat(rebuilt).hasSize(40);
  }

  private static void waitFor(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
