package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling restart of a 3-member cluster under hundreds of caches on one connection (issue 33, the scale bench's
 * rolling storms): each member SIGKILLed in turn, the leader first. The caches of the killed member move to the
 * others; no cache may go stale twice in one restart, and the client is never replaced: a member's death or an
 * election is the cluster's doing, and the channel fails over to the members that answer.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@Tag("etcd-versions")
class RollingRestartIT {
  private static final int CACHES = 400;

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  @Test
  void killingEachMemberInTurnReplacesNoClientAndMakesNoCacheStaleTwice() throws Exception {
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    AtomicIntegerArray staleTimes = new AtomicIntegerArray(CACHES);
    List<EndpointCache> caches = new ArrayList<>();
    try (PlainEtcdWriter registry = new PlainEtcdWriter(etcd.endpoints(), service);
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      long rev = registry.put(registry.instance(1));
      for (int i = 0; i < CACHES; i++) {
        int index = i;
        caches.add(muster.watch(CacheConfig.builder(service).build(), new EndpointListener() {
          @Override
          public void onChange(EndpointSet set, dev.muster.cache.EndpointDelta delta) {}

          @Override
          public void onStale(EndpointSet set, Instant since, String reason) {
            staleTimes.incrementAndGet(index);
          }
        }));
      }
      for (EndpointCache c : caches) {
        registry.awaitMatches(c, rev, Duration.ofSeconds(60));
      }

      List<EtcdMember> order = new ArrayList<>();
      order.add(etcd.awaitLeader(Duration.ofSeconds(20)));
      etcd.members().stream().filter(m -> !order.contains(m)).forEach(order::add);
      for (EtcdMember member : order) {
        for (int i = 0; i < CACHES; i++) {
          staleTimes.set(i, 0);
        }
        member.kill();
        Thread.sleep(5000);
        member.restart();
        etcd.awaitHealthy(Duration.ofSeconds(30));
        long last = registry.put(registry.instance(2 + member.index()));
        for (EndpointCache c : caches) {
          registry.awaitMatches(c, last, Duration.ofSeconds(30));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> caches.stream().noneMatch(EndpointCache::isStale));
        int wentStale = 0;
        int most = 0;
        for (int i = 0; i < CACHES; i++) {
          wentStale += staleTimes.get(i) > 0 ? 1 : 0;
          most = Math.max(most, staleTimes.get(i));
        }
        Map<String, Long> stats = muster.connectionStats();
        System.out.printf("member %s killed 5 s and back: %d of %d caches went stale, at most %d times each; %s%n",
            member.name(), wentStale, CACHES, most, stats);
        assertThat(most).as("times one cache went stale in %s's restart", member.name()).isLessThanOrEqualTo(1);
        assertThat(stats).containsEntry("replaced.suspect", 0L).containsEntry("replaced.accepts_again", 0L);
      }
      assertThat(caches).allSatisfy(c -> assertThat(c.resyncCount()).isZero());
    }
  }
}
