package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd 18089 / 19179 against real etcd 3.4: a watch that starts exactly at the compaction revision does not get the
 * DELETEs at that revision. Each test builds the shape deterministically through the fault proxy and ends with the
 * cache equal to a fresh range. With the old resume rule (watch from {@code last + 1}) every test but the last keeps
 * a deleted instance forever; with the rule of {@code CacheDriver} (watch from {@code last}) etcd answers
 * "compacted" and the cache resyncs, which each test also checks, so a test cannot pass by missing the shape.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class ResumeAtCompactionIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration CATCH_UP = Duration.ofSeconds(30);

  private ProxiedEtcd fixture;
  private FaultProxy proxy;
  private EtcdRegistry viaProxy;
  private PlainEtcdWriter registry;

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

  private EndpointCache watch() {
    EndpointCache cache = viaProxy.watch(CacheConfig.builder(registry.service).progressInterval(Duration.ofSeconds(1))
        .progressTimeout(Duration.ofSeconds(1)).backoff(Duration.ofMillis(50), Duration.ofMillis(500)).build());
    assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
    return cache;
  }

  /** The cache holds a and b at R - 1; the proxy is cut and the cache knows it. */
  private EndpointCache cutAfterAAndB(Instance a, Instance b) {
    registry.put(a);
    long before = registry.put(b);
    EndpointCache cache = watch();
    registry.awaitMatches(cache, before, CATCH_UP);
    proxy.cut();
    await().atMost(CATCH_UP).until(cache::isStale);
    return cache;
  }

  private void assertEqualsEtcd(EndpointCache cache, long last) {
    registry.awaitMatches(cache, last, CATCH_UP);
    assertThat(cache.current().asMap()).isEqualTo(registry.at(0));
    await().atMost(CATCH_UP).until(() -> !cache.isStale());
  }

  @Test
  void aDeleteAtTheCompactionRevisionWhileCutIsNotLost() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    EndpointCache cache = cutAfterAAndB(a, b);

    long deleted = registry.delete(a);
    registry.compact(deleted);
    proxy.pass();

    assertEqualsEtcd(cache, deleted);
    assertThat(cache.current().contains(a.key())).isFalse();
    assertThat(cache.resyncCount()).as("etcd answered the resume with compacted").isEqualTo(1);
  }

  @Test
  void aDeleteThenAPutWhileCutCompactedAtTheDeleteAreBothSeen() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    Instance c = registry.instance(3);
    EndpointCache cache = cutAfterAAndB(a, b);

    long deleted = registry.delete(a);
    long last = registry.put(c);
    registry.compact(deleted);
    proxy.pass();

    assertEqualsEtcd(cache, last);
    assertThat(cache.current().contains(a.key())).isFalse();
    assertThat(cache.current().contains(c.key())).isTrue();
    assertThat(cache.resyncCount()).isEqualTo(1);
  }

  @Test
  void aTransactionDeletingOneKeyAndPuttingAnotherCompactedAtItsRevisionIsSeenWhole() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    Instance c = registry.instance(3);
    EndpointCache cache = cutAfterAAndB(a, b);

    long both = registry.deleteAndPut(a, c);
    registry.compact(both);
    proxy.pass();

    assertEqualsEtcd(cache, both);
    assertThat(cache.current().contains(a.key())).isFalse();
    assertThat(cache.current().contains(c.key())).isTrue();
    assertThat(cache.resyncCount()).isEqualTo(1);
  }

  /**
   * The first watch after the initial range at R races a delete at R + 1 compacted at R + 1. The proxy delays
   * every chunk by two seconds, so the watch request is still on its way when the test deletes and compacts.
   */
  @Test
  void aCompactionJustAfterTheInitialRangeRacingTheFirstWatchIsNotLost() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    registry.put(a);
    long ranged = registry.put(b);
    proxy.latency(Duration.ofSeconds(2));
    EndpointCache cache = viaProxy.watch(CacheConfig.builder(registry.service).requestTimeout(Duration.ofSeconds(20))
        .progressInterval(Duration.ofSeconds(10)).progressTimeout(Duration.ofSeconds(10)).build());
    await().atMost(CATCH_UP).pollInterval(Duration.ofMillis(5)).until(() -> cache.revision() >= ranged);

    long deleted = registry.delete(b); // the watch request from the range revision has not reached etcd yet
    registry.compact(deleted);

    assertEqualsEtcd(cache, deleted);
    assertThat(cache.current().contains(b.key())).isFalse();
    assertThat(cache.resyncCount()).as("the first watch was below the compaction (if 0, it reached etcd first:"
        + " the proxy's latency no longer covers the test's writes)").isEqualTo(1);
  }

  /** The other case of the rule: compacted at the checkpoint itself, the resume is accepted and nothing is lost. */
  @Test
  void aCompactionAtTheCheckpointItselfNeedsNoResync() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    Instance c = registry.instance(3);
    registry.put(a);
    registry.put(b);
    EndpointCache cache = watch();
    long checkpoint = registry.delete(a);
    registry.awaitMatches(cache, checkpoint, CATCH_UP);
    proxy.cut();
    await().atMost(CATCH_UP).until(cache::isStale);

    long last = registry.put(c);
    registry.compact(checkpoint);
    proxy.pass();

    assertEqualsEtcd(cache, last);
    assertThat(cache.resyncCount()).as("a watch from the checkpoint is not below the compaction").isZero();
  }
}
