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

/** The cache behind a fault proxy on a single etcd member: cuts, compaction, half-open connections. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class EndpointCacheIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private ProxiedEtcd fixture;
  private FaultProxy proxy;
  private EtcdRegistry viaProxy;
  private PlainEtcdWriter registry;
  private final ChangeLog log = new ChangeLog();

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

  private CacheConfig.Builder config() {
    return CacheConfig.builder(registry.service).progressInterval(Duration.ofSeconds(1))
        .progressTimeout(Duration.ofSeconds(1)).backoff(Duration.ofMillis(100), Duration.ofSeconds(1));
  }

  private EndpointCache watch(CacheConfig config) {
    EndpointCache cache = viaProxy.watch(config, log);
    assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
    return cache;
  }

  @Test
  void aCutWatchResumesAtTheCheckpointAndCatchesUpWithADeleteAndAPutMadeWhileCut() {
    Instance a = registry.instance(1);
    Instance b = registry.instance(2);
    registry.put(a);
    long rev = registry.put(b);
    EndpointCache cache = watch(config().build());
    registry.awaitMatches(cache, rev, Duration.ofSeconds(10));

    proxy.cut();
    await().atMost(Duration.ofSeconds(10)).until(cache::isStale);
    assertThat(cache.current().size()).as("stale-while-error keeps the set").isEqualTo(2);
    registry.delete(a);
    Instance c = registry.instance(3);
    long last = registry.put(c);
    proxy.pass();

    registry.awaitMatches(cache, last, Duration.ofSeconds(20));
    await().atMost(Duration.ofSeconds(10)).until(() -> !cache.isStale());
    assertThat(cache.resyncCount()).as("resumed at the checkpoint, no resync").isZero();
    assertThat(cache.current().instances()).extracting(Instance::id).containsExactlyInAnyOrder("i2", "i3");
    System.out.println("cut/resume log: " + log);
  }

  @Test
  void aCompactionWhileCutForcesOneResyncThatReplacesTheSet() {
    Instance a = registry.instance(1);
    registry.put(a);
    long rev = registry.put(registry.instance(2));
    EndpointCache cache = watch(config().build());
    registry.awaitMatches(cache, rev, Duration.ofSeconds(10));

    proxy.cut();
    await().atMost(Duration.ofSeconds(10)).until(cache::isStale);
    registry.delete(a);
    registry.put(registry.instance(3));
    long compacted = registry.compact();
    proxy.pass();

    registry.awaitMatches(cache, compacted, Duration.ofSeconds(20));
    assertThat(cache.resyncCount()).isEqualTo(1);
    assertThat(cache.current().instances()).extracting(Instance::id).containsExactlyInAnyOrder("i2", "i3");
    assertThat(log.lines()).anyMatch(l -> l.startsWith("RESYNC@"));
  }

  @Test
  void aBlackholedConnectionIsDetectedByTheStallCheckAndTheWatchResumes() {
    long rev = registry.put(registry.instance(1));
    EndpointCache cache = watch(config().build());
    registry.awaitMatches(cache, rev, Duration.ofSeconds(10));

    proxy.blackhole();
    long start = System.nanoTime();
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20)).until(cache::isStale);
    Duration detection = Duration.ofNanos(System.nanoTime() - start);
    System.out.println("half-open watch detected after " + detection.toMillis()
        + " ms (progressInterval 1 s + progressTimeout 1 s)");
    registry.delete(registry.instance(1));
    long last = registry.put(registry.instance(2));
    proxy.pass();

    registry.awaitMatches(cache, last, Duration.ofSeconds(30));
    assertThat(cache.resyncCount()).isZero();
    assertThat(detection).isLessThan(Duration.ofSeconds(15));
  }

  @Test
  void aThousandInstancesInOneBurstArriveAndTenThousandAreRangedInPinnedPages() {
    registry.putInBatches(java.util.stream.IntStream.range(0, 10_000).mapToObj(registry::instance).toList());
    EndpointCache cache = watch(config().pageSize(500).build());
    long rev = registry.revision();
    registry.awaitMatches(cache, rev, Duration.ofSeconds(30));
    assertThat(cache.current().size()).isEqualTo(10_000);

    long last = registry.putBurst(java.util.stream.IntStream.range(10_000, 11_000).mapToObj(registry::instance)
        .toList());
    registry.awaitMatches(cache, last, Duration.ofSeconds(30));
    assertThat(cache.current().size()).isEqualTo(11_000);
  }

  @Test
  void malformedAndOversizedValuesAreExcludedCountedAndTheRestIsServed() {
    registry.put(registry.instance(1));
    EndpointCache cache = watch(config().build());
    registry.putRaw(registry.prefix() + "v1/broken", "not json".getBytes());
    byte[] big = ("{\"address\":\"10.0.0.9\",\"port\":80,\"metadata\":{\"x\":\"" + "y".repeat(17_000) + "\"}}")
        .getBytes();
    registry.putRaw(registry.prefix() + "v1/huge", big);
    long last = registry.put(registry.instance(2));

    registry.awaitMatches(cache, last, Duration.ofSeconds(10));
    assertThat(cache.current().instances()).extracting(Instance::id).containsExactlyInAnyOrder("i1", "i2");
    assertThat(cache.malformedCount()).isEqualTo(2);
    assertThat(cache.isStale()).isFalse();
  }
}
