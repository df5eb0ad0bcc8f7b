package dev.muster.cache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.client.ManualCache;
import dev.muster.registry.Instance;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The directory of shared caches on hand-fed caches: one cache per config, holds counted, listeners per hold. */
class SharedCachesTest {
  private static final CacheConfig ORDERS = CacheConfig.builder("orders").build();
  private static final Instance O1 = Instance.of("orders", "10.0.0.1", 8080).id("o1");
  private static final Instance O2 = Instance.of("orders", "10.0.0.2", 8080).id("o2");

  private final List<ManualCache> started = new CopyOnWriteArrayList<>();
  private final SharedCaches directory = new SharedCaches(config -> {
    ManualCache c = new ManualCache(config);
    started.add(c);
    return c;
  });

  private static EndpointListener into(List<EndpointSet> seen) {
    return (set, delta) -> seen.add(set);
  }

  @Test
  void equalConfigsShareOneCacheWhichTheLastCloseCloses() {
    EndpointCache a = directory.open(ORDERS, List.of());
    EndpointCache b = directory.open(CacheConfig.builder("orders").build(), List.of());

    assertThat(started).hasSize(1);
    assertThat(directory.size()).isEqualTo(1);
    assertThat(directory.holds(ORDERS)).isEqualTo(2);
    a.close();
    a.close(); // a second close of the same hold releases nothing more
    assertThat(started.get(0).closes()).isZero();
    assertThat(directory.holds(ORDERS)).isEqualTo(1);
    b.close();

    assertThat(started.get(0).closes()).isEqualTo(1);
    assertThat(directory.size()).isZero();
    assertThat(directory.holds(ORDERS)).isZero();
  }

  @Test
  void differentConfigsDoNotShare() {
    directory.open(ORDERS, List.of());
    directory.open(CacheConfig.builder("orders").version("v2").build(), List.of());
    directory.open(CacheConfig.builder("orders").namespace("eu").build(), List.of());

    assertThat(started).hasSize(3);
    assertThat(directory.size()).isEqualTo(3);
  }

  @Test
  void eachHoldHearsEveryChangeUntilItClosesAndThenNothing() {
    List<EndpointSet> seenByA = new ArrayList<>();
    List<EndpointSet> seenByB = new ArrayList<>();
    EndpointCache a = directory.open(ORDERS, List.of(into(seenByA)));
    EndpointCache b = directory.open(ORDERS, List.of(into(seenByB)));
    ManualCache cache = started.get(0);
    cache.publish(O1);
    assertThat(a.current().instances()).containsExactly(O1);
    a.close();
    cache.publish(O1, O2);

    assertThat(seenByA).extracting(s -> s.instances().size()).containsExactly(1);
    assertThat(seenByB).extracting(s -> s.instances().size()).containsExactly(1, 2);
    assertThat(cache.listenerCount()).as("a's listener left the shared cache").isEqualTo(1);
    assertThat(a.current().instances()).as("a closed hold still reads the shared set").hasSize(2);
    assertThatThrownBy(() -> a.addListener(into(seenByA))).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("hold on the cache of orders is closed");
    b.close();
  }

  @Test
  void aLateHolderFirstReceivesTheCurrentSet() {
    directory.open(ORDERS, List.of());
    started.get(0).publish(O1, O2);
    List<EndpointSet> late = new ArrayList<>();
    directory.open(ORDERS, List.of(into(late)));

    assertThat(late).singleElement().satisfies(s -> assertThat(s.instances()).containsExactly(O1, O2));
  }

  @Test
  void aHoldAfterTheLastCloseStartsAFreshCache() {
    directory.open(ORDERS, List.of()).close();
    directory.open(ORDERS, List.of());

    assertThat(started).hasSize(2);
    assertThat(started.get(0).closes()).isEqualTo(1);
    assertThat(started.get(1).closes()).isZero();
  }

  @Test
  void aClosedDirectoryRefusesNewHoldsAndLeavesClosingTheCachesToTheRegistry() {
    EndpointCache a = directory.open(ORDERS, List.of());
    directory.close();

    assertThatThrownBy(() -> directory.open(ORDERS, List.of())).isInstanceOf(IllegalStateException.class)
        .hasMessage("the registry is closed: open caches before closing it");
    a.close();
    assertThat(started.get(0).closes()).as("the registry closes its caches itself").isZero();
  }

  @Test
  @Timeout(30)
  void holdsOpenedAndClosedFromManyThreadsLeaveEveryCacheClosedExactlyOnce() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<?>> done = new ArrayList<>();
    Map<Integer, Integer> opensPerThread = new ConcurrentHashMap<>();
    try {
      for (int t = 0; t < 8; t++) {
        int thread = t;
        done.add(pool.submit(() -> {
          go.await();
          for (int i = 0; i < 2_000; i++) {
            directory.open(i % 2 == 0 ? ORDERS : CacheConfig.builder("users").build(), List.of((s, d) -> { }))
                .close();
            opensPerThread.merge(thread, 1, Integer::sum);
          }
          return null;
        }));
      }
      go.countDown();
      for (Future<?> f : done) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    assertThat(opensPerThread.values()).allSatisfy(n -> assertThat(n).isEqualTo(2_000));
    assertThat(directory.size()).isZero();
    assertThat(started).isNotEmpty().allSatisfy(c -> {
      assertThat(c.closes()).isEqualTo(1);
      assertThat(c.listenerCount()).isZero();
    });
  }
}
