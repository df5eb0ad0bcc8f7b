package dev.muster.bench.curator;

import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import java.io.PrintStream;
import java.time.Duration;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;

/**
 * register → visible and graceful unregister → gone, for each consumer count {@code n}: a provider-side {@code
 * ServiceDiscovery} in this JVM registers an instance with a fresh id; the sample is the time from just before
 * {@code registerService} until the last of the {@code n} caches lists it (then the same for {@code
 * unregisterService} until the last cache drops it). {@code registerService} returns after the server has
 * fsynced the create, so the interval covers the write, its commit and the watch notification, as on the etcd side.
 *
 * <p>Not thread-safe: runs on the measuring thread; the caches report through a {@link CacheTracker}.
 */
final class VisibilityRun {
  private static final int WARMUP = 3;
  private static final Duration PAUSE = Duration.ofMillis(20);
  private static final Duration SAMPLE_LIMIT = Duration.ofSeconds(20);

  /** Any port: nothing connects to these instances. */
  private static final int PORT = 8080;

  private final Plan plan;
  private final String connect;
  private final SideResult result;
  private final PrintStream progress;

  VisibilityRun(Plan plan, String connect, SideResult result, PrintStream progress) {
    this.plan = plan;
    this.connect = connect;
    this.result = result;
    this.progress = progress;
  }

  /** One step per consumer count; a failed count is noted and the next one still runs. */
  void run() {
    CuratorFramework providerClient = null;
    ServiceDiscovery<String> provider = null;
    try {
      providerClient = Curators.connected(connect, plan.ttl());
      provider = Curators.discovery(providerClient);
      for (int n : plan.cacheCounts()) {
        progress.printf("curator: register→visible / unregister→gone N=%d (%d samples)...%n", n,
            plan.visibleSamples());
        try {
          measure(n, provider);
        } catch (RuntimeException e) {
          result.failed("register→visible N=" + n, Curators.oneLine(e));
        }
      }
    } catch (RuntimeException e) {
      result.failed("register→visible", Curators.oneLine(e));
    } finally {
      Curators.closeQuietly(provider);
      Curators.closeQuietly(providerClient);
    }
  }

  private void measure(int n, ServiceDiscovery<String> provider) {
    String service = CuratorBench.freshService("visible-n" + n);
    CacheTracker tracker = new CacheTracker(n);
    long setUp = System.nanoTime();
    try (Consumers consumers = Consumers.open(n, connect, plan.ttl(), service, tracker)) {
      result.note(String.format("register→visible N=%d: consumers connected and caches started in %d ms (set-up, "
          + "not measured)", n, (System.nanoTime() - setUp) / 1_000_000));
      for (int i = 0; i < WARMUP + plan.visibleSamples(); i++) {
        boolean recorded = i >= WARMUP;
        String id = service + "-" + i;
        tracker.track(id);
        ServiceInstance<String> instance = Curators.instance(service, id, PORT);

        long t0 = System.nanoTime();
        Curators.call("registerService " + id, () -> {
          provider.registerService(instance);
          return null;
        });
        Wait.until(id + " visible in all " + n + " caches", SAMPLE_LIMIT, () -> tracker.visibleEverywhere(id));
        if (recorded) {
          result.latency(Metric.visible(n)).addNanos(tracker.lastSeenAt(id) - t0);
        }

        long t1 = System.nanoTime();
        Curators.call("unregisterService " + id, () -> {
          provider.unregisterService(instance);
          return null;
        });
        Wait.until(id + " gone from all " + n + " caches", SAMPLE_LIMIT, () -> tracker.goneEverywhere(id));
        if (recorded) {
          result.latency(Metric.gone(n)).addNanos(tracker.lastGoneAt(id) - t1);
        }
        tracker.forget(id);
        Wait.sleep(PAUSE);
      }
    }
  }
}
