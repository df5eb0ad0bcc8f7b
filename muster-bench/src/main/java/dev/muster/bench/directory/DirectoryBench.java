package dev.muster.bench.directory;

import dev.muster.bench.etcd.RawEtcd;
import dev.muster.bench.support.EtcdMetrics;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.ServiceDirectory;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * etcd's load from finding a namespace's services (issue 34, item 4), the two ways on one etcd and one workload:
 * <ul>
 *   <li><b>listing</b>: what the DNS gateway and the console did until issue 34, reproduced here: every second, one
 *       keys-only range of the namespace ({@code EtcdRegistry.services}), then a cache opened for each new service
 *       and released for each service gone;
 *   <li><b>watch</b>: {@link ServiceDirectory}: one keys-only range, then a watch of the namespace's keys.
 * </ul>
 * Both hold the same caches ({@link EtcdRegistry#open}). The namespace has {@value #SERVICES} services of two
 * instances; every {@value #CHURN_MS} ms one new service is written and the oldest one deleted. Reported per mode:
 * Range requests, Watch messages sent and gRPC bytes sent by etcd per second (its {@code /metrics}), and how long a new
 * service took from its write to its cache being opened (p50, max).
 */
public final class DirectoryBench {
  static final int SERVICES = 100;
  static final long CHURN_MS = 2_000;
  private static final String NAMESPACE = "dirbench";
  private static final RegistryLayout LAYOUT = RegistryLayout.defaults();

  /** One mode's figures over {@code seconds}. */
  public record Row(String mode, double seconds, EtcdMetrics.Load load, int added, long p50Ms, long maxMs) {
    double perSecond(long n) {
      return n / seconds;
    }
  }

  public record Result(List<Row> rows, List<String> failures) {
    public void print(PrintStream out) {
      out.println();
      out.printf("Finding services (%d services x 2 instances, one added and one removed every %d ms; etcd's"
          + " /metrics)%n", SERVICES, CHURN_MS);
      out.printf("  %-8s %8s %12s %16s %14s %8s %12s %12s%n", "mode", "seconds", "ranges/s", "watch msgs out/s",
          "KB out/s", "added", "p50 ms", "max ms");
      for (Row r : rows) {
        out.printf("  %-8s %8.0f %12.2f %16.2f %14.1f %8d %12d %12d%n", r.mode(), r.seconds(),
            r.perSecond(r.load().ranges()), r.perSecond(r.load().watchMessagesSent()),
            r.perSecond(r.load().bytesSent()) / 1024.0, r.added(), r.p50Ms(), r.maxMs());
      }
      out.println("  ranges: Range requests etcd received (each cache's first range included, the same in both);"
          + " added: new services seen; p50/max: from a new service's write to its cache being opened.");
      failures.forEach(f -> out.println("  FAILED: " + f));
    }
  }

  private final PrintStream progress;
  private final Client raw;
  private final EtcdRegistry registry;
  private final URI metrics;
  private final Map<String, Long> writtenAt = new ConcurrentHashMap<>();
  private final Histogram seen = new Histogram(3_600_000L, 3);
  private int next;

  private DirectoryBench(PrintStream progress, Client raw, EtcdRegistry registry, URI metrics) {
    this.progress = progress;
    this.raw = raw;
    this.registry = registry;
    this.metrics = metrics;
  }

  public static Result run(boolean quick, PrintStream progress) {
    List<Row> rows = new ArrayList<>();
    List<String> failures = new ArrayList<>();
    Duration each = Duration.ofSeconds(quick ? 20 : 60);
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start();
         Client raw = RawEtcd.client(etcd.endpointsString())) {
      progress.println("directory: started etcd at " + etcd.endpointsString());
      for (String mode : List.of("listing", "watch")) {
        try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
          DirectoryBench b = new DirectoryBench(progress, raw, registry, etcd.member(0).clientUrl());
          rows.add(b.measure(mode, each));
        }
      }
    } catch (RuntimeException e) {
      failures.add("directory: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failures.add("directory: interrupted");
    }
    return new Result(rows, failures);
  }

  private Row measure(String mode, Duration each) throws InterruptedException {
    for (int i = 0; i < SERVICES; i++) {
      write(next++);
    }
    writtenAt.clear(); // the first services are found by the first read, not timed
    Map<String, EndpointCache> held = new TreeMap<>();
    ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
    ServiceDirectory directory = null;
    try {
      if (mode.equals("listing")) {
        listOnce(held);
        timers.scheduleWithFixedDelay(() -> listOnce(held), 1, 1, TimeUnit.SECONDS);
      } else {
        directory = ServiceDirectory.builder(registry, s -> {
          found(s.service());
          return null;
        }).namespaces(List.of(NAMESPACE)).start();
        if (!directory.awaitListed(Duration.ofSeconds(30))) {
          throw new IllegalStateException("the directory did not read the services in 30 s");
        }
      }
      sleep(Duration.ofSeconds(3)); // the caches' first ranges, before the measured window
      EtcdMetrics.Load before = EtcdMetrics.load(metrics);
      long t0 = System.nanoTime();
      timers.scheduleAtFixedRate(this::churn, CHURN_MS, CHURN_MS, TimeUnit.MILLISECONDS);
      sleep(each);
      timers.shutdown(); // a churn under way ends first: its service is either whole or not written
      if (!timers.awaitTermination(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("a churn step did not end in 10 s");
      }
      double seconds = (System.nanoTime() - t0) / 1e9;
      EtcdMetrics.Load used = EtcdMetrics.load(metrics).minus(before);
      Row row = new Row(mode, seconds, used, (int) seen.getTotalCount(), seen.getValueAtPercentile(50),
          seen.getMaxValue());
      progress.printf("directory: %s: %.2f ranges/s, %d new services seen, p50 %d ms%n", mode,
          row.perSecond(used.ranges()), row.added(), row.p50Ms());
      return row;
    } finally {
      timers.shutdownNow();
      if (directory != null) {
        directory.close();
      }
      held.values().forEach(EndpointCache::close);
      raw.getKVClient().delete(bytes(LAYOUT.namespacePrefix(NAMESPACE)),
          io.etcd.jetcd.options.DeleteOption.builder().isPrefix(true).build()).join();
    }
  }

  /** The old way: list the namespace's services, open and release caches to match (the timer thread). */
  private void listOnce(Map<String, EndpointCache> held) {
    try {
      var now = registry.services(NAMESPACE);
      for (String s : now) {
        if (!held.containsKey(s)) {
          found(s);
          held.put(s, registry.open(CacheConfig.builder(s).namespace(NAMESPACE).build(), (EndpointListener)
              (set, delta) -> { }));
        }
      }
      for (String s : List.copyOf(held.keySet())) {
        if (!now.contains(s)) {
          held.remove(s).close();
        }
      }
    } catch (RuntimeException e) {
      progress.println("directory: listing failed: " + e.getMessage());
    }
  }

  private void found(String service) {
    Long at = writtenAt.remove(service);
    if (at != null) {
      seen.recordValue(Math.max(0, (System.nanoTime() - at) / 1_000_000));
    }
  }

  /** One new service of two instances written, the oldest deleted (the timer thread). */
  private void churn() {
    try {
      int n = next++;
      writtenAt.put(service(n), System.nanoTime());
      write(n);
      raw.getKVClient().delete(bytes(LAYOUT.servicePrefix(NAMESPACE, service(n - SERVICES))),
          io.etcd.jetcd.options.DeleteOption.builder().isPrefix(true).build()).get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      progress.println("directory: churn failed: " + e);
    }
  }

  private void write(int n) {
    for (int j = 0; j < 2; j++) {
      Instance i = Instance.of(service(n), "127.0.0." + (j + 1), 8080).namespace(NAMESPACE).id("i" + j);
      try {
        raw.getKVClient().put(bytes(LAYOUT.instanceKey(i)), ByteSequence.from(InstanceCodec.encode(i)))
            .get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new IllegalStateException("cannot write " + i.key().path() + ": " + e, e);
      }
    }
  }

  private static String service(int n) {
    return "svc" + n;
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
