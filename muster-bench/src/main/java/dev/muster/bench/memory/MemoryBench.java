package dev.muster.bench.memory;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.bench.etcd.BulkInstances;
import dev.muster.bench.etcd.RawEtcd;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.Heap;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Memory per component (issue 19 §6), on live objects: per cached instance, per cache, per registration, per
 * balancer endpoint. Two methods, each said in its row:
 * <ul>
 *   <li><b>JOL</b> ({@link Footprint}): the bytes of the objects reachable from a component's roots, every object
 *       once, with headers and padding. Used where the component's own objects can be told from shared ones: an
 *       {@link EndpointSet}, a {@link Balancer} less the instances its set already holds, and the registry's whole
 *       graph before and after adding M caches or registrations (what the M added, wherever it hangs: jetcd's
 *       watchers, the registry's lists).
 *   <li><b>heap</b> ({@link Heap#usedAfterGc()}): used heap after full collections, before and after, divided by
 *       the number added. Counts everything retained, including what only static fields or thread stacks reach,
 *       and the noise of a live JVM (a few KB: spread over M it is a few bytes each).
 * </ul>
 * Neither counts a thread's stack (not heap), native memory (Netty's direct buffers) or etcd's own memory.
 *
 * <p>Figures are printed, never judged. A step that fails is a note; the others still run. Runs on the calling
 * thread.
 */
public final class MemoryBench {
  private static final Duration LIMIT = Duration.ofSeconds(120);
  private static final int TOP_CLASSES = 15;
  private static final String CACHED = "bench-mem-cached";
  private static final String SMALL = "bench-mem-small";
  private static final int SMALL_INSTANCES = 3;

  /** One figure: {@code bytes} per one of {@code what}, measured over {@code n} of them. */
  public record Row(String what, String method, int n, double bytes) {}

  /** Where one row's bytes go, by class (lines from {@link Footprint#breakdown}). */
  public record Breakdown(String title, List<String> lines) {}

  public record Result(List<Row> rows, List<Breakdown> breakdowns, List<String> notes, List<String> failures) {
    public void print(PrintStream out) {
      out.println();
      out.println("Memory per component (bytes per unit; JOL = the live objects' graph, heap = used heap after"
          + " full GCs; no thread stacks, no native memory)");
      if (!rows.isEmpty()) {
        out.printf("%-52s %-34s %8s %12s%n", "per", "method", "n", "bytes");
      }
      rows.forEach(r -> out.printf(Locale.ROOT, "%-52s %-34s %,8d %,12.1f%n", r.what(), r.method(), r.n(),
          r.bytes()));
      for (Breakdown b : breakdowns) {
        out.println("  " + b.title() + ":");
        b.lines().forEach(l -> out.println("    " + l));
      }
      notes.forEach(n -> out.println("  note: " + n));
      failures.forEach(f -> out.println("  failed: " + f));
    }

    /** The rows in results.csv, section {@code memory}: one row per figure, the count in the samples column. */
    public void csv(ResultTables report) {
      for (Row r : rows) {
        report.csvRow("memory", r.what() + " (" + r.method() + ")", "bytes", "muster", Integer.toString(r.n()), "",
            "", "", String.format(Locale.ROOT, "%.1f", r.bytes()));
      }
    }
  }

  private final boolean quick;
  private final PrintStream progress;
  private final List<Row> rows = new ArrayList<>();
  private final List<Breakdown> breakdowns = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();

  private MemoryBench(boolean quick, PrintStream progress) {
    this.quick = quick;
    this.progress = progress;
  }

  /** {@code logs}: unused, the signature the sections share (etcd's own log is the launcher's business). */
  public static Result run(boolean quick, Path logs, PrintStream progress) {
    MemoryBench b = new MemoryBench(quick, progress);
    b.step("JOL", () -> b.notes.add(Jol.describe()));
    b.step("balancer endpoint", b::balancer);
    b.step("set built in memory", b::setInMemory);
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
        Client raw = RawEtcd.client(etcd.endpointsString());
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      progress.println("memory: started a private etcd member at " + etcd.endpointsString());
      b.step("warm-up", () -> b.warmUp(raw, registry));
      b.step("cached instance", () -> b.cachedInstance(raw, registry));
      b.step("cache", () -> b.cache(raw, registry));
      b.step("registration", () -> b.registration(etcd.endpointsString()));
    } catch (RuntimeException e) {
      b.failures.add("memory: " + e.getMessage());
    }
    return new Result(List.copyOf(b.rows), List.copyOf(b.breakdowns), List.copyOf(b.notes), List.copyOf(b.failures));
  }

  private void step(String name, Runnable body) {
    try {
      body.run();
    } catch (RuntimeException e) {
      failures.add("memory, " + name + ": " + e);
    }
  }

  // ---- pure structures (no etcd) --------------------------------------------------------------------------------

  /** A set of instances {@code 0..n-1} of {@code service} ({@link BulkInstances#instance}), built in this JVM. */
  static EndpointSet setOf(String service, int n) {
    List<Instance> instances = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      instances.add(BulkInstances.instance(service, i));
    }
    return EndpointSet.of(1, instances);
  }

  /** JOL's bytes of {@link #setOf}{@code (service, n)}, divided by {@code n}. */
  static double setBytesPerInstance(int n) {
    return Footprint.of(setOf(CACHED, n)).bytes() / (double) n;
  }

  private void setInMemory() {
    int n = instances();
    Footprint f = Footprint.of(setOf(CACHED, n));
    rows.add(new Row("instance, the same set built in memory", "JOL of the set / n", n, f.bytes() / (double) n));
    breakdowns.add(new Breakdown("instance, the same set built in memory, JOL by class, per instance",
        f.breakdown(TOP_CLASSES, n)));
    notes.add("the same set built in memory: the same instances made with Instance.of in this JVM, whose namespace,"
        + " version and service strings are one object each for all instances (literals and one argument); the"
        + " decoded set's breakdown shows how many strings each cached instance holds instead");
  }

  private void balancer() {
    int n = instances();
    progress.printf("memory: a balancer of %,d endpoints (JOL; allocation of its build)...%n", n);
    Footprint empty = balancerFootprint(EndpointSet.EMPTY);
    EndpointSet set = setOf("bench-mem-balancer", n);
    Footprint full = balancerFootprint(set);
    Footprint perEndpoint = full.minus(empty);
    rows.add(new Row("balancer endpoint (weighted random)", "JOL, (balancer at n - at 0) / n", n,
        perEndpoint.bytes() / (double) n));
    breakdowns.add(new Breakdown("balancer endpoint, JOL by class, per endpoint", perEndpoint.breakdown(TOP_CLASSES,
        n)));
    rows.add(new Row("balancer, empty", "JOL of the balancer, no endpoint", 1, empty.bytes()));
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long bytes = 0;
    for (int round = 0; round < 3; round++) { // the last of three, after the JIT has seen the path twice
      Balancer b = newBalancer();
      long before = threads.getCurrentThreadAllocatedBytes();
      b.update(set);
      bytes = threads.getCurrentThreadAllocatedBytes() - before;
      Reference.reachabilityFence(b);
    }
    rows.add(new Row("balancer endpoint, allocated by update(set)", "ThreadMXBean, one update / n", n,
        bytes / (double) n));
    notes.add("balancer: Balancer.create (weighted random, ejection off) given one set of n instances;"
        + " JOL counts the balancer's graph (endpoint states, key map, ordered arrays, picker, detector) less what"
        + " the set's instances hold (shared with the cache), at n and at 0 endpoints");
  }

  private static Balancer newBalancer() {
    OutlierDetector detector = new OutlierDetector(OutlierConfig.defaults().toBuilder().enabled(false).build(),
        System::nanoTime);
    return Balancer.create(BalancerConfig.defaults().toBuilder().policy(BalancerConfig.Policy.WEIGHTED_RANDOM)
        .build(), detector, removed -> { });
  }

  /** The balancer given {@code set}, less the set's own objects (the instances are the cache's). */
  static Footprint balancerFootprint(EndpointSet set) {
    Balancer b = newBalancer();
    b.update(set);
    return Footprint.owned(b, set);
  }

  // ---- on etcd --------------------------------------------------------------------------------------------------

  private int instances() {
    return quick ? 2_000 : 10_000;
  }

  /**
   * One cache of the small service, opened and closed: loads the classes, starts the delivery pool and makes the
   * registry's Netty event loops allocate their queues, none of which the steps after it should count.
   */
  private void warmUp(Client raw, EtcdRegistry registry) {
    BulkInstances.write(raw, RegistryLayout.defaults(), SMALL, SMALL_INSTANCES);
    EndpointCache warm = registry.watch(CacheConfig.builder(SMALL).build());
    awaitSize(warm, SMALL_INSTANCES);
    warm.close();
  }

  private void cachedInstance(Client raw, EtcdRegistry registry) {
    int n = instances();
    progress.printf("memory: writing %,d instances, then one cache of them...%n", n);
    BulkInstances.write(raw, RegistryLayout.defaults(), CACHED, n);
    Footprint graphBefore = Footprint.of(registry); // the before figures first: they are live at both readings
    Footprint histogramBefore = HeapHistogram.take();
    long before = Heap.usedAfterGc();
    EndpointCache cache = registry.watch(CacheConfig.builder(CACHED).build());
    try {
      awaitSize(cache, n);
      long after = Heap.usedAfterGc();
      Footprint histogram = HeapHistogram.since(histogramBefore);
      Footprint graph = Footprint.of(registry).minus(graphBefore);
      EndpointSet set = cache.current();
      Footprint f = Footprint.of(set);
      rows.add(new Row("cached instance", "JOL of cache.current() / n", n, f.bytes() / (double) n));
      rows.add(new Row("cached instance, cache and all", "heap, (after - before) / n", n,
          (after - before) / (double) n));
      rows.add(new Row("cached instance, cache and all", "JOL, registry's graph, delta / n", n,
          graph.bytes() / (double) n));
      Instance one = set.instances().get(n / 2);
      rows.add(new Row("one cached Instance alone", "JOL of one, less shared constants", 1,
          Footprint.owned(one, (Object[]) sharedConstants()).bytes()));
      breakdowns.add(new Breakdown("cached instance, JOL by class, per instance (" + set + ")",
          f.breakdown(TOP_CLASSES, n)));
      breakdowns.add(new Breakdown("cached instance, cache and all: JOL by class of the registry's graph's growth,"
          + " per instance", graph.breakdown(TOP_CLASSES, n)));
      breakdowns.add(new Breakdown(String.format(Locale.ROOT, "cached instance, cache and all: heap by class (class"
          + " histogram's difference, %.1f B per instance), per instance", histogram.bytes() / (double) n),
          histogram.breakdown(TOP_CLASSES, n)));
      notes.add("cached instance: " + n + " instances of one service as etcd holds them (" + BulkInstances.instance(
          CACHED, 0).address() + ":8080, no zone, tags or metadata), decoded by a real EndpointCache; JOL counts"
          + " the published EndpointSet (tree nodes, keys, instances, their strings); the heap row also counts the"
          + " cache itself and what else it keeps per key; one Instance alone leaves out the constants every"
          + " instance shares (the InstanceState values, the empty tag list and metadata map)");
      Reference.reachabilityFence(set);
    } finally {
      cache.close();
    }
  }

  /** Objects every instance may point at and none owns. */
  private static Object[] sharedConstants() {
    List<Object> shared = new ArrayList<>(List.of((Object[]) InstanceState.values()));
    shared.add(List.of());
    shared.add(Map.of());
    return shared.toArray();
  }

  private void cache(Client raw, EtcdRegistry registry) {
    int m = quick ? 200 : 1_000;
    progress.printf("memory: %,d caches of a service of %d instances on one registry...%n", m, SMALL_INSTANCES);
    List<EndpointCache> caches = new ArrayList<>(m);
    Footprint graphBefore = Footprint.of(registry); // the before figures first: they are live at both readings
    Footprint histogramBefore = HeapHistogram.take();
    long before = Heap.usedAfterGc();
    try {
      for (int i = 0; i < m; i++) {
        caches.add(registry.watch(CacheConfig.builder(SMALL).build()));
      }
      caches.forEach(c -> awaitSize(c, SMALL_INSTANCES));
      long after = Heap.usedAfterGc();
      Footprint histogram = HeapHistogram.since(histogramBefore);
      Footprint graph = Footprint.of(registry).minus(graphBefore);
      rows.add(new Row("cache (of " + SMALL_INSTANCES + " instances)", "heap, (after - before) / m", m,
          (after - before) / (double) m));
      rows.add(new Row("cache (of " + SMALL_INSTANCES + " instances)", "JOL, registry's graph, delta / m", m,
          graph.bytes() / (double) m));
      breakdowns.add(new Breakdown("cache, JOL by class of the registry's graph's growth, per cache",
          graph.breakdown(TOP_CLASSES, m)));
      breakdowns.add(new Breakdown(String.format(Locale.ROOT, "cache, heap by class (class histogram's difference,"
          + " %.1f B per cache), per cache", histogram.bytes() / (double) m), histogram.breakdown(TOP_CLASSES, m)));
      notes.add("cache: m caches of one service on one EtcdRegistry (one jetcd client, one watch stream each),"
          + " each holding its set of " + SMALL_INSTANCES + " instances (counted in); the JOL row walks the registry"
          + " before and after (the caches, their drivers and executors, jetcd's watchers, the registry's list),"
          + " the heap row counts everything retained; the process's delivery pool is shared, not counted");
    } finally {
      caches.forEach(EndpointCache::close);
    }
  }

  private void registration(String endpoints) {
    int m = quick ? 50 : 200;
    progress.printf("memory: %,d registrations on one registry...%n", m);
    RegistrarConfig config = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build();
    // Its own registry: closing it closes all m registrations at once (each revokes its lease).
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints))) {
      registry.register(registrant(-1), config, RegistrationListener.NONE).close(); // classes, lease pool
      List<Registration> registrations = new ArrayList<>(m);
      Footprint graphBefore = Footprint.of(registry); // the before figures first: they are live at both readings
      long buffersBefore = Footprint.recyclerBuffers(registry);
      Footprint histogramBefore = HeapHistogram.take();
      long before = Heap.usedAfterGc();
      for (int i = 0; i < m; i++) {
        registrations.add(registry.register(registrant(i), config, RegistrationListener.NONE));
      }
      long after = Heap.usedAfterGc();
      Footprint histogram = HeapHistogram.since(histogramBefore);
      Footprint graph = Footprint.of(registry).minus(graphBefore);
      long buffers = Footprint.recyclerBuffers(registry) - buffersBefore;
      rows.add(new Row("registration", "heap, (after - before) / m", m, (after - before) / (double) m));
      rows.add(new Row("registration", "JOL, registry's graph, delta / m", m, graph.bytes() / (double) m));
      rows.add(new Row("registration: its thread's Jackson buffers", "JOL, arrays under a BufferRecycler / m", m,
          buffers / (double) m));
      breakdowns.add(new Breakdown("registration, JOL by class of the registry's graph's growth, per registration",
          graph.breakdown(TOP_CLASSES, m)));
      breakdowns.add(new Breakdown(String.format(Locale.ROOT, "registration, heap by class (class histogram's"
          + " difference, %.1f B per registration), per registration", histogram.bytes() / (double) m),
          histogram.breakdown(TOP_CLASSES, m)));
      notes.add("registration: m registrations (drain 0, no shutdown hook) on one EtcdRegistry, all UP; each has"
          + " a serial executor over the registrations' shared pool, no thread of its own (before issue 33 item 6 each"
          + " owned one, muster-registrar-<id>); etcd's side (a lease, a key) is not in this JVM; the Jackson"
          + " buffers row counts BufferRecyclers kept per thread (Jackson's default ThreadLocal pool; Muster's"
          + " Json.MAPPER takes them from one shared pool, so 0 there)");
      Reference.reachabilityFence(registrations);
    }
  }

  private static Instance registrant(int i) {
    return Instance.of("bench-mem-reg", "10.2." + ((i + 1) / 250) + "." + ((i + 1) % 250), 8080)
        .id(i < 0 ? "warm" : String.format("r%04d", i));
  }

  private static void awaitSize(EndpointCache cache, int n) {
    Wait.until("a cache of " + n + " instances", LIMIT, () -> cache.current().size() == n);
  }
}
