package dev.muster.cache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The cache's runtime over a scripted I/O, no registry: what the I/O hands the {@link LiveCache.Loop} reaches the
 * driver on the loop and the listeners on the delivery pool, and nothing does once the cache is closed. The rules
 * themselves are {@link CacheDriverTest}'s; the runtime on etcd is muster-etcd's ITs'.
 */
@Timeout(30)
class LiveCacheTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private final List<String> journal = Collections.synchronizedList(new ArrayList<>());
  private final ScriptedIo io = new ScriptedIo(journal);
  private final AtomicReference<LiveCache.Loop> loop = new AtomicReference<>();
  private final AtomicReference<String> prefix = new AtomicReference<>();
  private final Seen seen = new Seen();
  private LiveCache cache;

  @AfterEach
  void close() {
    if (cache != null) {
      cache.close();
    }
  }

  private LiveCache start(CacheConfig config) {
    cache = LiveCache.start(Endpoints.LAYOUT, config, (p, l) -> {
      prefix.set(p);
      loop.set(l);
      return io;
    }, CacheDriver.ResumeRule.AT_CHECKPOINT, Clock.systemUTC(), null, List.of(seen), c -> { });
    return cache;
  }

  @Test
  void theFirstRangeAndAWatchedRevisionReachTheListenersOnTheDeliveryPool() {
    io.willRange(10, Endpoints.put("a", 9));
    start(CacheConfig.builder(Endpoints.SERVICE).build());

    assertThat(cache.awaitReady(Duration.ofSeconds(10))).isTrue();
    assertThat(prefix.get()).isEqualTo(Endpoints.PREFIX).isEqualTo(cache.prefix());
    assertThat(Endpoints.ids(cache.current())).containsExactly("a");
    await().atMost(Duration.ofSeconds(10)).until(() -> journal.contains("watch 1 from 10"));

    long stream = io.lastStream();
    CacheDriver.Header header = new CacheDriver.Header(ScriptedIo.CLUSTER, 11);
    loop.get().execute(() -> { // as the I/O hands a watch response over: from another thread, onto the loop
      loop.get().driver().onCreated(stream, new CacheDriver.Header(ScriptedIo.CLUSTER, 10));
      loop.get().driver().onEvents(stream, header, List.of(Endpoints.put("b", 11)));
    });

    await().atMost(Duration.ofSeconds(10)).until(() -> Endpoints.ids(cache.current()).equals(Set.of("a", "b")));
    await().atMost(Duration.ofSeconds(10)).until(() -> seen.kinds.size() == 2);
    assertThat(seen.kinds).containsExactly(EndpointDelta.Kind.SNAPSHOT, EndpointDelta.Kind.UPDATE);
    assertThat(seen.threads).allMatch(t -> t.startsWith("muster-delivery-"));
    loop.get().execute(() -> assertThat(loop.get().checkpoint()).isEqualTo(11));
  }

  @Test
  void listenersRunOnTheConfiguredListenerExecutor() throws Exception {
    java.util.concurrent.ExecutorService listenerThreads = java.util.concurrent.Executors.newSingleThreadExecutor(
        r -> new Thread(r, "app-listener"));
    try {
      io.willRange(10, Endpoints.put("a", 9));
      start(CacheConfig.builder(Endpoints.SERVICE).listenerExecutor(listenerThreads).build());

      await().atMost(Duration.ofSeconds(10)).until(() -> seen.kinds.size() == 1);
      assertThat(seen.threads).containsExactly("app-listener");
    } finally {
      cache.close();
      listenerThreads.shutdown();
    }
  }

  @Test
  void afterCloseTheLoopDropsWhatTheIoHandsIt() throws Exception {
    io.willRange(10);
    start(CacheConfig.builder(Endpoints.SERVICE).build());
    assertThat(cache.awaitReady(Duration.ofSeconds(10))).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> journal.contains("watch 1 from 10"));

    cache.close();
    CountDownLatch ran = new CountDownLatch(1);
    loop.get().execute(ran::countDown);

    assertThat(ran.await(200, TimeUnit.MILLISECONDS)).isFalse();
    assertThat(journal).contains("cancel 1");
  }

  /**
   * Metrics cost an event's apply nothing: the cache's meters are pulled when scraped, so applying a PUT on the loop
   * allocates no more with every cache meter bound (and scraped meanwhile) than with none. Counted in bytes the loop
   * thread allocates, after warm-up rounds.
   */
  @Test
  void applyingAnEventAllocatesNoMoreWithEveryMeterBound() throws Exception {
    io.willRange(10, Endpoints.put("a", 9));
    start(CacheConfig.builder(Endpoints.SERVICE).build());
    assertThat(cache.awaitReady(Duration.ofSeconds(10))).isTrue();
    await().atMost(Duration.ofSeconds(10)).until(() -> journal.contains("watch 1 from 10"));
    long stream = io.lastStream();
    loop.get().execute(() -> loop.get().driver().onCreated(stream, new CacheDriver.Header(ScriptedIo.CLUSTER, 10)));
    long[] revision = {10};
    long unbound = 0;
    for (int round = 0; round < 4; round++) { // three rounds warm up
      unbound = bytesPerApply(stream, revision);
    }
    MeterRegistry meters = new SimpleMeterRegistry();
    try (MusterMeters.Binding bound = MusterMeters.cache(meters, cache, Tags.of("service", Endpoints.SERVICE))) {
      meters.getMeters().forEach(m -> m.measure().forEach(x -> { }));
      long withMeters = bytesPerApply(stream, revision);
      System.out.printf("[LiveCacheTest] bytes per apply on the loop: %d with no meter, %d with every cache meter"
          + " bound%n", unbound, withMeters);

      assertThat(withMeters).as("bytes per apply, %d with no meter bound", unbound)
          .isLessThanOrEqualTo(unbound + unbound / 20 + 64);
      assertThat(meters.get("muster.cache.changes").functionCounter().count()).isEqualTo(revision[0] - 9);
    }
  }

  /** Applies 1,000 PUTs (each changes instance a's weight) on the loop; the bytes the loop allocated per apply. */
  private long bytesPerApply(long stream, long[] revision) throws Exception {
    int n = 1_000;
    List<CacheRecord> records = new ArrayList<>(n);
    for (int i = 1; i <= n; i++) {
      long r = revision[0] + i;
      records.add(Endpoints.put(Endpoints.instance("a").weight(r % 2 == 0 ? 50 : 100), r));
    }
    CompletableFuture<Long> bytes = new CompletableFuture<>();
    loop.get().execute(() -> {
      long before = THREADS.getCurrentThreadAllocatedBytes();
      for (CacheRecord record : records) {
        loop.get().driver().onEvents(stream, new CacheDriver.Header(ScriptedIo.CLUSTER, record.modRevision()),
            List.of(record));
      }
      bytes.complete((THREADS.getCurrentThreadAllocatedBytes() - before) / n);
    });
    revision[0] += n;
    return bytes.get(10, TimeUnit.SECONDS);
  }

  /** What the listener was given, and on which threads. */
  private static final class Seen implements EndpointListener {
    final List<EndpointDelta.Kind> kinds = new CopyOnWriteArrayList<>();
    final List<String> threads = new CopyOnWriteArrayList<>();

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      kinds.add(delta.kind());
      threads.add(Thread.currentThread().getName());
    }
  }
}
