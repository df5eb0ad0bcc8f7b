package dev.muster.bench.curator;

import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Heap;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;

/**
 * The 10,000-instance rows: a cache built from nothing, and the heap a built cache retains per instance.
 *
 * <p>Set-up writes {@link Plan#bulkInstances()} instance znodes exactly as {@code registerService} would (the same
 * serializer, an ephemeral node at {@code basePath/service/id}, parents as containers), but pipelined from one
 * client with up to {@value #IN_FLIGHT} creates outstanding: registering them one synchronous round trip (and one
 * fsync) at a time would take minutes and measure nothing we report. That client holds the nodes' session until
 * the run ends.
 *
 * <p>{@code ServiceCache.start()} (Curator 5.9) is {@code startImmediate().await()}: it returns only once the
 * underlying {@code CuratorCache} has read every child and fired "initialized", so the build sample is taken when
 * {@code start()} returns and the cache lists all instances (checked; noted if it ever did not).
 *
 * <p>Not thread-safe: runs on the measuring thread. Create callbacks run on the ZooKeeper client's event thread.
 */
final class BulkRun {
  private static final int IN_FLIGHT = 500;
  private static final Duration CREATE_LIMIT = Duration.ofSeconds(120);
  private static final Duration BUILD_LIMIT = Duration.ofSeconds(60);

  private final Plan plan;
  private final String connect;
  private final SideResult result;
  private final PrintStream progress;

  BulkRun(Plan plan, String connect, SideResult result, PrintStream progress) {
    this.plan = plan;
    this.connect = connect;
    this.result = result;
    this.progress = progress;
  }

  void run() {
    String service = CuratorBench.freshService("bulk");
    CuratorFramework owner = null;
    try {
      progress.printf("curator: writing %,d instances for the cache-build and heap rows...%n", plan.bulkInstances());
      owner = Curators.connected(connect, plan.ttl());
      createInstances(owner, service);
    } catch (RuntimeException e) {
      String why = "setting up " + plan.bulkInstances() + " instances: " + Curators.oneLine(e);
      result.failed("build", why);
      result.failed("heap per instance", why);
      Curators.closeQuietly(owner);
      return;
    }
    try {
      progress.printf("curator: cache build of %,d instances (%d repeats)...%n", plan.bulkInstances(),
          plan.bulkRepeats());
      try {
        measureBuilds(service);
      } catch (RuntimeException e) {
        result.failed("build", Curators.oneLine(e));
      }
      progress.printf("curator: heap per cached instance (%,d instances)...%n", plan.bulkInstances());
      try {
        measureHeap(service);
      } catch (RuntimeException e) {
        result.failed("heap per instance", Curators.oneLine(e));
      }
    } finally {
      Curators.closeQuietly(owner);
    }
  }

  private void createInstances(CuratorFramework owner, String service) {
    int n = plan.bulkInstances();
    JsonInstanceSerializer<String> serializer = Curators.serializer();
    String parent = ZKPaths.makePath(Curators.BASE_PATH, service);
    Curators.call("create " + parent, () -> {
      owner.createContainers(parent);
      return null;
    });
    Semaphore inFlight = new Semaphore(IN_FLIGHT);
    CountDownLatch done = new CountDownLatch(n);
    AtomicReference<String> firstError = new AtomicReference<>();
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      ServiceInstance<String> instance = Curators.instance(service, id(service, i), 20_000 + i % 40_000);
      byte[] bytes = Curators.call("serialize an instance", () -> serializer.serialize(instance));
      Curators.call("wait for a create slot", () -> {
        inFlight.acquire();
        return null;
      });
      Curators.call("create " + instance.getId(), () -> owner.create()
          .creatingParentContainersIfNeeded()
          .withMode(CreateMode.EPHEMERAL)
          .inBackground((client, event) -> {
            if (event.getResultCode() != KeeperException.Code.OK.intValue()) {
              firstError.compareAndSet(null,
                  KeeperException.Code.get(event.getResultCode()) + " creating " + event.getPath());
            }
            inFlight.release();
            done.countDown();
          })
          .forPath(ZKPaths.makePath(parent, instance.getId()), bytes));
    }
    boolean finished = Curators.call("wait for the creates", () -> done.await(CREATE_LIMIT.toSeconds(),
        TimeUnit.SECONDS));
    if (!finished) {
      throw new BenchException(done.getCount() + " of " + n + " creates unanswered after " + CREATE_LIMIT.toSeconds()
          + " s");
    }
    if (firstError.get() != null) {
      throw new BenchException(firstError.get());
    }
    long createdMs = (System.nanoTime() - start) / 1_000_000;

    // The bytes must be what ServiceDiscovery reads back as an instance, or the build rows would measure nothing.
    String probe = id(service, n / 2);
    int children = Curators.call("count children", () -> owner.getChildren().forPath(parent).size());
    ServiceDiscovery<String> discovery = Curators.discovery(owner);
    ServiceInstance<String> read;
    try {
      read = Curators.call("queryForInstance " + probe, () -> discovery.queryForInstance(service, probe));
    } finally {
      Curators.closeQuietly(discovery);
    }
    if (children != n || read == null || !probe.equals(read.getId())) {
      throw new BenchException("wrote " + n + " instances but found " + children + " children and read back "
          + (read == null ? "nothing" : read.getId()) + " for " + probe);
    }
    result.note(String.format("build: %,d ephemeral instance znodes created in %,d ms (pipelined, %d in flight); "
        + "queryForInstance reads them back", n, createdMs, IN_FLIGHT));
  }

  private void measureBuilds(String service) {
    int n = plan.bulkInstances();
    int fullOnStart = 0;
    for (int r = 0; r < plan.bulkRepeats(); r++) {
      CuratorFramework client = Curators.connected(connect, plan.ttl());
      ServiceDiscovery<String> discovery = null;
      ServiceCache<String> cache = null;
      try {
        discovery = Curators.discovery(client);
        long t0 = System.nanoTime();
        cache = discovery.serviceCacheBuilder().name(service).build();
        startCache(cache);
        if (cache.getInstances().size() == n) {
          fullOnStart++;
        }
        ServiceCache<String> built = cache;
        Wait.until(n + " instances in the cache", BUILD_LIMIT, () -> built.getInstances().size() == n);
        result.latency(Metric.BUILD).addNanos(System.nanoTime() - t0);
      } finally {
        Curators.closeQuietly(cache);
        Curators.closeQuietly(discovery);
        Curators.closeQuietly(client);
      }
    }
    result.note(String.format("build: fresh connected client each time; timed from serviceCacheBuilder().build() "
        + "until start() returned and getInstances() listed all %,d (start() blocks until the initial load; "
        + "the cache was already full when start() returned in %d of %d builds)", n, fullOnStart,
        plan.bulkRepeats()));
  }

  private void measureHeap(String service) {
    int n = plan.bulkInstances();
    CuratorFramework client = Curators.connected(connect, plan.ttl());
    ServiceDiscovery<String> discovery = null;
    ServiceCache<String> cache = null;
    try {
      discovery = Curators.discovery(client);
      long before = Heap.usedAfterGc();
      cache = discovery.serviceCacheBuilder().name(service).build();
      startCache(cache);
      ServiceCache<String> built = cache;
      Wait.until(n + " instances in the cache", BUILD_LIMIT, () -> built.getInstances().size() == n);
      long after = Heap.usedAfterGc();
      Reference.reachabilityFence(cache);
      result.value(Metric.HEAP_PER_INSTANCE, (double) (after - before) / n);
      result.note(String.format("heap per instance: used heap after GC %,d → %,d bytes around one ServiceCache of "
          + "%,d instances (its client and ServiceDiscovery already existed)", before, after, n));
    } finally {
      Curators.closeQuietly(cache);
      Curators.closeQuietly(discovery);
      Curators.closeQuietly(client);
    }
  }

  private static void startCache(ServiceCache<String> cache) {
    Curators.call("start ServiceCache", () -> {
      cache.start();
      return null;
    });
  }

  private static String id(String service, int i) {
    return String.format("%s-%05d", service, i);
  }
}
