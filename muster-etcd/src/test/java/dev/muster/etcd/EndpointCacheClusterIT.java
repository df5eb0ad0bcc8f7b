package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The cache on a 3-member cluster: leader loss under churn, and quorum loss. */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution (requireLeader)
class EndpointCacheClusterIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  @Test
  void killingTheLeaderWhileProvidersChurnLosesNoEvent() throws Exception {
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    List<Long> applied = new CopyOnWriteArrayList<>();
    try (PlainEtcdWriter registry = new PlainEtcdWriter(etcd.endpoints(), service);
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      EndpointCache cache = muster.watch(CacheConfig.builder(service).progressInterval(Duration.ofSeconds(2))
          .progressTimeout(Duration.ofSeconds(2)).build(), (set, delta) -> applied.add(set.revision()));
      assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();

      AtomicBoolean churning = new AtomicBoolean(true);
      AtomicLong lastWrite = new AtomicLong();
      Thread churn = new Thread(() -> {
        Random random = new Random(7);
        while (churning.get()) {
          int n = random.nextInt(40);
          try {
            lastWrite.accumulateAndGet(random.nextBoolean() ? registry.put(registry.instance(n))
                : registry.delete(registry.instance(n)), Math::max);
          } catch (RuntimeException e) {
            // during the election writes fail; the churn goes on
          }
        }
      }, "churn");
      churn.start();
      Thread.sleep(1000);
      EtcdMember leader = etcd.killLeader();
      Thread.sleep(3000);
      churning.set(false);
      churn.join();
      long last = Math.max(lastWrite.get(), registry.put(registry.instance(99)));

      registry.awaitMatches(cache, last, Duration.ofSeconds(30));
      assertThat(applied).as("published revisions only move forward").isSorted();
      System.out.printf("leader %s killed under churn: %d publications, final revision %d, resyncs %d%n",
          leader.name(), applied.size(), cache.revision(), cache.resyncCount());
    }
  }

  @Test
  void losingTheMajorityLeavesTheSetStaleButNotEmptyAndItMatchesOnceTheMajorityIsBack() {
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    try (PlainEtcdWriter registry = new PlainEtcdWriter(etcd.endpoints(), service);
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(etcd.member(0).clientUrl().toString()))) {
      registry.put(registry.instance(1));
      long rev = registry.put(registry.instance(2));
      EndpointCache cache = muster.watch(CacheConfig.builder(service).progressInterval(Duration.ofSeconds(2))
          .progressTimeout(Duration.ofSeconds(2)).build());
      registry.awaitMatches(cache, rev, Duration.ofSeconds(20));

      etcd.killMajority();
      await().atMost(Duration.ofSeconds(30)).until(cache::isStale);
      assertThat(cache.current().size()).isEqualTo(2);

      etcd.bringBackAll();
      registry.delete(registry.instance(1));
      long last = registry.put(registry.instance(3));
      registry.awaitMatches(cache, last, Duration.ofSeconds(30));
      await().atMost(Duration.ofSeconds(10)).until(() -> !cache.isStale());
      // The member the cache talks to stayed up and answered "no leader": etcd kept the revision, and the connection
      // was never at fault, so nothing was resynced and the client never replaced.
      System.out.printf("majority lost and back: resyncs %d, connection %s%n", cache.resyncCount(),
          muster.connectionStats());
      assertThat(cache.resyncCount()).isZero();
      assertThat(muster.connectionStats()).containsEntry("replaced.suspect", 0L)
          .containsEntry("replaced.accepts_again", 0L);
    }
  }
}
