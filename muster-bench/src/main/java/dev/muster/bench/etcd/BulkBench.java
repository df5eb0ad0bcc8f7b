package dev.muster.bench.etcd;

import dev.muster.bench.support.Heap;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import java.io.PrintStream;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The rows that need {@link Plan#bulkInstances()} instances in etcd:
 * <ul>
 *   <li><b>full resync</b>: a new cache from {@code watch()} to its first published set of all instances
 *       (paged range pinned to one revision + decode + build + publish), against the floor of the same paged
 *       range with raw jetcd (no decoding);
 *   <li><b>event throughput</b>: updates written as fast as etcd takes them (a window of pipelined puts) while one
 *       cache holds every instance: events applied per second at the cache, from its first to its last update,
 *       against a raw jetcd watcher under the same load (measured one after the other, not at once, so they do
 *       not share the two cores);
 *   <li><b>heap</b>: retained heap per cached instance (used heap after full GCs, around building a cache).
 * </ul>
 * Runs on the calling thread.
 */
final class BulkBench {
  private static final Duration LIMIT = Duration.ofSeconds(120);
  private static final int IN_FLIGHT = 256;
  private static final int WARMUP = 2;

  private final String endpoints;
  private final Plan plan;
  private final PrintStream progress;
  private final String service = "bench-bulk";
  private final RegistryLayout layout = RegistryLayout.defaults();
  private byte[][] values;
  private byte[][] changed;
  private String[] keys;
  private boolean[] holdsChanged;

  BulkBench(String endpoints, Plan plan, PrintStream progress) {
    this.endpoints = endpoints;
    this.plan = plan;
    this.progress = progress;
  }

  void run(SideResult muster, SideResult floor) {
    int n = plan.bulkInstances();
    try (Client raw = RawEtcd.client(endpoints);
         EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints))) {
      progress.printf("etcd: writing %,d instances...%n", n);
      fill(raw);
      muster.note("one instance value is " + values[0].length + " bytes of JSON (SPEC §2 shape)");
      progress.printf("etcd: full resync of %,d instances, %d times (and the raw paged range)...%n", n,
          plan.bulkRepeats());
      int pageSize = CacheConfig.builder(service).build().pageSize();
      String prefix = layout.servicePrefix(Instance.DEFAULT_NAMESPACE, service);
      for (int r = -WARMUP; r < plan.bulkRepeats(); r++) { // the first ones warm the JIT up (the first is ~1 s)
        long t0 = System.nanoTime();
        int read = RawEtcd.rangeAll(raw, prefix, pageSize);
        long rawNanos = System.nanoTime() - t0;
        if (read != n) {
          throw new IllegalStateException("the raw range read " + read + " keys, not " + n);
        }
        long musterNanos = resync(registry);
        if (r >= 0) {
          floor.latency(Metric.BUILD).addNanos(rawNanos);
          muster.latency(Metric.BUILD).addNanos(musterNanos);
        }
      }
      progress.printf("etcd: heap per cached instance (%,d instances)...%n", n);
      long before = Heap.usedAfterGc();
      EndpointCache cache = registry.watch(CacheConfig.builder(service).build());
      Wait.until("the heap cache's first set", LIMIT, () -> cache.current().size() == n);
      long after = Heap.usedAfterGc();
      muster.value(Metric.HEAP_PER_INSTANCE, (after - before) / (double) n);
      Reference.reachabilityFence(cache);
      cache.close();
      progress.printf("etcd: event throughput, %,d updates into a cache of %,d (then into a raw watcher)...%n",
          plan.throughputEvents(), n);
      floor.value(Metric.EVENTS_PER_SECOND, throughputRaw(raw, prefix));
      muster.value(Metric.EVENTS_PER_SECOND, throughputMuster(raw, registry));
    }
  }

  private void fill(Client raw) {
    int n = plan.bulkInstances();
    BulkInstances.Written written = BulkInstances.write(raw, layout, service, n);
    keys = written.keys();
    values = written.values();
    changed = new byte[n][];
    for (int i = 0; i < n; i++) {
      changed[i] = InstanceCodec.encode(BulkInstances.instance(service, i).weight(50));
    }
    holdsChanged = new boolean[n];
  }

  private long resync(EtcdRegistry registry) {
    AtomicLong publishedAt = new AtomicLong();
    long t0 = System.nanoTime();
    EndpointCache cache = registry.watch(CacheConfig.builder(service).build(), (EndpointSet set, EndpointDelta d) -> {
      if (set.size() == plan.bulkInstances()) {
        publishedAt.compareAndSet(0, System.nanoTime());
      }
    });
    try {
      Wait.until("a cache of " + plan.bulkInstances() + " instances", LIMIT, () -> publishedAt.get() != 0);
      return publishedAt.get() - t0;
    } finally {
      cache.close();
    }
  }

  private double throughputRaw(Client raw, String prefix) {
    Counter counter = new Counter();
    try (Client c = RawEtcd.client(endpoints)) {
      Watch.Watcher w = RawEtcd.watchPrefix(c, prefix, (key, isPut) -> counter.add(1));
      try {
        write(raw);
        Wait.until("the raw watcher to receive every update", LIMIT, () -> counter.count() >= plan.throughputEvents());
        return counter.perSecond();
      } finally {
        w.close();
      }
    }
  }

  private double throughputMuster(Client raw, EtcdRegistry registry) {
    Counter counter = new Counter();
    EndpointCache cache = registry.watch(CacheConfig.builder(service).build(), (EndpointSet set, EndpointDelta d) -> {
      if (d.kind() == EndpointDelta.Kind.UPDATE) {
        counter.add(d.changed().size() + d.added().size() + d.removed().size());
      }
    });
    try {
      Wait.until("the throughput cache's first set", LIMIT, () -> cache.current().size() == plan.bulkInstances());
      write(raw);
      Wait.until("the cache to apply every update", LIMIT, () -> counter.count() >= plan.throughputEvents());
      return counter.perSecond();
    } finally {
      cache.close();
    }
  }

  /** Writes {@link Plan#throughputEvents()} single-key updates, {@link #IN_FLIGHT} at a time, each a real change. */
  private void write(Client raw) {
    Semaphore window = new Semaphore(IN_FLIGHT);
    int n = plan.bulkInstances();
    for (int e = 0; e < plan.throughputEvents(); e++) {
      int i = e % n;
      holdsChanged[i] = !holdsChanged[i]; // every put changes its instance, so none is a no-op at the cache
      window.acquireUninterruptibly();
      raw.getKVClient().put(RawEtcd.bytes(keys[i]),
          io.etcd.jetcd.ByteSequence.from(holdsChanged[i] ? changed[i] : values[i]))
          .whenComplete((r, err) -> window.release());
    }
    window.acquireUninterruptibly(IN_FLIGHT);
  }

  /** Counts events and remembers when the first and the last arrived. Thread-safe (one delivering thread). */
  private static final class Counter {
    private final AtomicLong count = new AtomicLong();
    private volatile long first;
    private volatile long last;

    void add(int events) {
      long now = System.nanoTime();
      if (count.getAndAdd(events) == 0) {
        first = now;
      }
      last = now;
    }

    long count() {
      return count.get();
    }

    double perSecond() {
      return (count.get() - 1) / ((last - first) / 1e9);
    }
  }
}
