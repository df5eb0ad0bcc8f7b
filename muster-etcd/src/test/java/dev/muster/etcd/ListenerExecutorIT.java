package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.internal.DeliveryPool;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * {@code CacheConfig.listenerExecutor} on a real etcd: listeners that block hold the application's threads, not the
 * shared delivery pool's, with the same order and one call at a time; an executor that refuses a task (shut down
 * while its cache is open) or drops one it had queued ({@code shutdownNow}) moves the listeners to the pool with
 * one WARN, and no event is lost.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ListenerExecutorIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final RegistrarConfig REGISTRAR = RegistrarConfig.builder().ttl(Duration.ofSeconds(5))
      .keepaliveInterval(Duration.ofSeconds(1)).drain(Duration.ZERO).shutdownHook(false).build();

  private EtcdRegistry registry;
  private PlainEtcdWriter writer;

  @BeforeEach
  void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    writer = new PlainEtcdWriter(etcd.endpoints(), "lexec-" + UUID.randomUUID().toString().substring(0, 8));
  }

  @AfterEach
  void close() {
    registry.close();
    writer.close();
  }

  /** Records one listener's calls; blocks in its first one until {@code release} when given one. */
  private static final class Recorder implements EndpointListener {
    private final CountDownLatch release;
    private final CountDownLatch blocked;
    final List<String> threads = new CopyOnWriteArrayList<>(); // "revision thread", per call
    final List<String> breaches = new CopyOnWriteArrayList<>();
    final Map<InstanceKey, Instance> rebuilt = new ConcurrentHashMap<>();
    volatile EndpointSet last;
    volatile int calls;

    Recorder(CountDownLatch release, CountDownLatch blocked) {
      this.release = release;
      this.blocked = blocked;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      calls++;
      threads.add(set.revision() + " " + Thread.currentThread().getName());
      if (calls == 1 && delta.kind() != EndpointDelta.Kind.SNAPSHOT) {
        breaches.add(delta.kind() + " first");
      }
      if (calls == 1 && release != null) {
        blocked.countDown();
        waitFor(release); // blocked in its SNAPSHOT while the others go on
      }
      delta.removed().forEach(i -> rebuilt.remove(i.key()));
      delta.added().forEach(i -> rebuilt.put(i.key(), i));
      delta.changed().forEach(i -> rebuilt.put(i.key(), i));
      if (!rebuilt.equals(set.asMap())) {
        breaches.add("the deltas up to " + set.revision() + " do not rebuild its set");
      }
      last = set;
    }

    boolean has(EndpointCache cache) {
      EndpointSet s = last;
      return s != null && s.revision() == cache.revision() && rebuilt.equals(cache.current().asMap());
    }
  }

  private static ThreadFactory named(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  @Test
  void listenersThatBlockOnTheirOwnExecutorLeaveTheDeliveryPoolToTheOtherCaches() throws Exception {
    int blocking = Math.max(20, DeliveryPool.PARALLELISM + DeliveryPool.MAX_SPARES + 4); // more than the pool has
    ExecutorService mine = Executors.newCachedThreadPool(named("app-listener-"));
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch allBlocked = new CountDownLatch(blocking);
    List<EndpointCache> caches = new ArrayList<>();
    List<Recorder> recorders = new ArrayList<>();
    try {
      writer.put(writer.instance(1));
      for (int i = 0; i < blocking; i++) {
        Recorder r = new Recorder(release, allBlocked);
        recorders.add(r);
        caches.add(registry.watch(CacheConfig.builder(writer.service).listenerExecutor(mine).build(), r));
      }
      assertThat(allBlocked.await(30, TimeUnit.SECONDS)).as("all %d listeners blocked in their SNAPSHOT", blocking)
          .isTrue();

      // A cache without an executor of its own: its range, its watch and its listener all need the pool.
      long start = System.nanoTime();
      Recorder free = new Recorder(null, null);
      EndpointCache other = registry.watch(CacheConfig.builder(writer.service).build(), free);
      Registration two = registry.register(writer.instance(2), REGISTRAR);
      await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
          .until(() -> free.last != null && free.last.asMap().keySet().stream().anyMatch(k -> k.id().equals("i2")));
      System.out.printf("with %d listeners blocked, a cache on the pool saw a new registration %d ms after it"
          + " opened%n", blocking, (System.nanoTime() - start) / 1_000_000);
      assertThat(free.threads).allMatch(t -> t.contains(" muster-delivery-"));

      writer.put(writer.instance(3));
      long newest = writer.delete(writer.instance(1));
      for (EndpointCache c : caches) {
        writer.awaitMatches(c, newest, Duration.ofSeconds(20)); // each blocked listener's cache kept up
      }
      release.countDown();
      for (int i = 0; i < blocking; i++) {
        Recorder r = recorders.get(i);
        EndpointCache c = caches.get(i);
        await().atMost(Duration.ofSeconds(20)).until(() -> r.has(c));
        assertThat(r.breaches).isEmpty();
        assertThat(r.last.revision()).isEqualTo(newest);
        assertThat(r.rebuilt.keySet()).extracting(InstanceKey::id).containsExactlyInAnyOrder("i2", "i3");
        assertThat(r.threads).as("every call on the listenerExecutor's threads").isNotEmpty()
            .allMatch(t -> t.contains(" app-listener-"));
      }
      two.close();
      other.close();
    } finally {
      release.countDown();
      caches.forEach(EndpointCache::close);
      mine.shutdownNow();
    }
  }

  @Test
  void anExecutorShutDownWhileItsCacheIsOpenHandsTheNextDeliveriesToTheSharedPoolWithOneWarn() throws Exception {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) LoggerFactory
        .getLogger("dev.muster.internal.ListenerExecutor");
    logger.addAppender(logged);
    ExecutorService mine = Executors.newSingleThreadExecutor(named("app-listener-"));
    try {
      long first = writer.put(writer.instance(1));
      Recorder r = new Recorder(null, null);
      EndpointCache cache = registry.watch(CacheConfig.builder(writer.service).listenerExecutor(mine).build(), r);
      await().atMost(Duration.ofSeconds(20)).until(() -> r.last != null && r.last.revision() >= first);
      assertThat(r.threads).allMatch(t -> t.contains(" app-listener-"));
      int before = r.threads.size();

      mine.shutdown(); // the application's mistake: its cache is still open
      assertThat(mine.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      writer.put(writer.instance(2));
      long newest = writer.delete(writer.instance(1));

      await().atMost(Duration.ofSeconds(10)).until(() -> r.has(cache) && r.last.revision() == newest);
      assertThat(r.breaches).isEmpty();
      assertThat(r.rebuilt.keySet()).extracting(InstanceKey::id).containsExactly("i2");
      assertThat(r.threads.subList(before, r.threads.size())).as("after the shutdown, on the shared pool")
          .isNotEmpty().allMatch(t -> t.contains(" muster-delivery-"));
      Recorder late = new Recorder(null, null);
      cache.addListener(late); // a listener added now still gets its SNAPSHOT, on the pool
      await().atMost(Duration.ofSeconds(10)).until(() -> late.has(cache));
      assertThat(late.threads).allMatch(t -> t.contains(" muster-delivery-"));

      List<String> warns = logged.list.stream().filter(e -> e.getLevel() == Level.WARN)
          .map(ILoggingEvent::getFormattedMessage).toList();
      assertThat(warns).as("one WARN, naming the service and what to do").hasSize(1);
      assertThat(warns.get(0)).contains(writer.service).contains("listenerExecutor")
          .contains("keep that executor running until the cache is closed");
      cache.close();
    } finally {
      logger.detachAppender(logged);
      mine.shutdownNow();
    }
  }

  @Test
  void aDeliveryThatShutdownNowDroppedReachesTheListenerOnThePoolWithTheNextChange() throws Exception {
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) LoggerFactory
        .getLogger("dev.muster.internal.ListenerExecutor");
    logger.addAppender(logged);
    ThreadPoolExecutor mine = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
        named("app-listener-"));
    try {
      long first = writer.put(writer.instance(1));
      Recorder r = new Recorder(null, null);
      EndpointCache cache = registry.watch(CacheConfig.builder(writer.service).listenerExecutor(mine).build(), r);
      await().atMost(Duration.ofSeconds(20)).until(() -> r.last != null && r.last.revision() >= first);
      CountDownLatch holding = new CountDownLatch(1);
      CountDownLatch never = new CountDownLatch(1);
      mine.execute(() -> { // the application's own task holds its one thread...
        holding.countDown();
        waitFor(never);
      });
      assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
      long dropped = writer.put(writer.instance(2));
      writer.awaitMatches(cache, dropped, Duration.ofSeconds(20));
      await().atMost(Duration.ofSeconds(10)).until(() -> mine.getQueue().size() == 1); // ...so the delivery queues

      assertThat(mine.shutdownNow()).as("shutdownNow drops the queued delivery").hasSize(1);
      assertThat(mine.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      assertThat(r.last.revision()).isLessThan(dropped);
      int before = r.threads.size();
      long newest = writer.delete(writer.instance(1));

      await().atMost(Duration.ofSeconds(10)).until(() -> r.has(cache) && r.last.revision() == newest);
      assertThat(r.breaches).isEmpty();
      assertThat(r.rebuilt.keySet()).extracting(InstanceKey::id).containsExactly("i2");
      assertThat(r.threads.subList(before, r.threads.size())).as("the dropped delivery and the next, on the pool")
          .isNotEmpty().allMatch(t -> t.contains(" muster-delivery-"));
      List<String> warns = logged.list.stream().filter(e -> e.getLevel() == Level.WARN)
          .map(ILoggingEvent::getFormattedMessage).toList();
      assertThat(warns).hasSize(1);
      assertThat(warns.get(0)).contains(writer.service).contains("shutdownNow");
      cache.close();
    } finally {
      logger.detachAppender(logged);
      mine.shutdownNow();
    }
  }

  private static void waitFor(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
