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
      // A quiet cluster, as between a fleet's changes: every cache asks for progress each second, so before each
      // kill the last success on the client is a progress answer, and some caches' requests came after it (a
      // success is recorded at most once per 10 ms). Their reports of the kill then find no success since their
      // attempt: without the rule of persistence, a SUSPECT replacement that breaks the caches already moved.
      CacheConfig config = CacheConfig.builder(service).progressInterval(Duration.ofSeconds(1)).build();
      for (int i = 0; i < CACHES; i++) {
        int index = i;
        caches.add(muster.watch(config, new EndpointListener() {
          @Override
          public void onChange(EndpointSet set, dev.muster.cache.EndpointDelta delta) {}

          @Override
          public void onStale(EndpointSet set, Instant since, String reason) {
            staleTimes.incrementAndGet(index);
          }
        }));
      }
      awaitAllMatch(registry, caches, rev, Duration.ofSeconds(60));

      List<EtcdMember> order = new ArrayList<>();
      order.add(etcd.awaitLeader(Duration.ofSeconds(20)));
      etcd.members().stream().filter(m -> !order.contains(m)).forEach(order::add);
      for (EtcdMember member : order) {
        for (int i = 0; i < CACHES; i++) {
          staleTimes.set(i, 0);
        }
        Thread.sleep(3000); // quiet: progress requests and answers only
        member.kill();
        Thread.sleep(5000);
        long t0 = System.nanoTime();
        member.restart();
        long restarted = System.nanoTime();
        etcd.awaitHealthy(Duration.ofSeconds(30));
        long healthy = System.nanoTime();
        long last = registry.put(registry.instance(2 + member.index()));
        awaitAllMatch(registry, caches, last, Duration.ofSeconds(30));
        await().atMost(Duration.ofSeconds(30)).until(() -> caches.stream().noneMatch(EndpointCache::isStale));
        System.out.printf("member %s: restart %d ms, healthy %d ms more, caches matched and fresh %d ms more%n",
            member.name(), (restarted - t0) / 1_000_000, (healthy - restarted) / 1_000_000,
            (System.nanoTime() - healthy) / 1_000_000);
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

  /**
   * Waits until every cache reached {@code revision}, then checks each equals etcd at it: nothing is written after
   * {@code revision}, so one range serves all 400 (awaiting each cache in turn cost a poll interval per cache).
   */
  private static void awaitAllMatch(PlainEtcdWriter registry, List<EndpointCache> caches, long revision,
      Duration within) {
    await().atMost(within).pollInterval(Duration.ofMillis(50))
        .until(() -> caches.stream().allMatch(c -> c.revision() >= revision));
    var expected = registry.at(revision);
    assertThat(caches).allSatisfy(c -> {
      assertThat(c.revision()).isEqualTo(revision);
      assertThat(c.current().asMap()).isEqualTo(expected);
    });
  }
}
