package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster watch SERVICE}: runs an endpoint cache and prints its set on every change (SPEC §7). With
 * {@code --json}, one object per line: {@code snapshot}, {@code update}, {@code resync}, {@code stale},
 * {@code recovered}, each with {@code ts}, {@code revision} and the full instance list. Runs until Ctrl-C/SIGTERM.
 */
@Command(name = "watch", description = "Watch SERVICE through an endpoint cache and print its set on every change.")
final class WatchCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Mixin
  TrustKeyOptions trust;

  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service to watch.")
  String service;

  @Option(names = "--version", paramLabel = "V", description = "Watch one version only (default: every version).")
  String version;

  @Option(names = "--json", description = "One JSON object per change and line.")
  boolean json;

  @Option(names = "--snapshot-file", paramLabel = "FILE",
      description = "Keep the last set in FILE; started while etcd is down, serve it (as stale) until etcd answers.")
  Path snapshotFile;

  @Option(names = "--progress-interval", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Silence this long while watching: ask etcd for progress (default ${DEFAULT-VALUE}).")
  Duration progressInterval;

  @Option(names = "--progress-timeout", paramLabel = "D", defaultValue = "5s", converter = DurationConverter.class,
      description = "No answer to a progress request this long: the connection is presumed dead (default"
          + " ${DEFAULT-VALUE}).")
  Duration progressTimeout;

  @Option(names = "--mass-removal-percent", paramLabel = "N", defaultValue = "0",
      description = "Hold the last good set when one change would remove more than N%% of it; 0 = off (default"
          + " ${DEFAULT-VALUE}).")
  int massRemovalPercent;

  @Option(names = "--start-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Exit 4 if no set (from etcd or the snapshot file) within this time (default ${DEFAULT-VALUE}).")
  Duration startTimeout;

  @Option(names = "--resume-from-now", hidden = true,
      description = "Negative control for the lab: after a break, watch from now and never re-range.")
  boolean resumeFromNow;

  /** Counted down by the shutdown hook, or when the cache fails for good. */
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final java.util.concurrent.atomic.AtomicReference<MusterException> failure =
      new java.util.concurrent.atomic.AtomicReference<>();

  @Override
  public Integer call() throws InterruptedException {
    CacheConfig.Builder config = CacheConfig.builder(service).namespace(common.namespace).version(version)
        .progressInterval(progressInterval).progressTimeout(progressTimeout).snapshotFile(snapshotFile)
        .trustedKeys(trust.trustedKeys(common.namespace, service));
    if (massRemovalPercent != 0) {
      config.massRemovalGuard(massRemovalPercent, Duration.ofSeconds(30));
    }
    CacheConfig cacheConfig = config.build();
    PrintWriter out = spec.commandLine().getOut();
    EtcdRegistry registry = EtcdRegistry.connect(common.etcdConfig());
    Thread stopper = new Thread(() -> {
      registry.close();
      stopped.countDown();
    }, "muster-watch-stop");
    Runtime.getRuntime().addShutdownHook(stopper);
    EndpointCache cache = resumeFromNow ? NegativeControls.watchFromNow(registry, cacheConfig)
        : registry.watch(cacheConfig);
    cache.addListener(new Printer(out, cache)); // first the set published last, then every change
    if (!cache.awaitReady(startTimeout)) {
      Runtime.getRuntime().removeShutdownHook(stopper);
      registry.close();
      cache.failure().ifPresent(refused -> {
        throw refused;
      });
      throw new RegistryUnavailableException("no endpoint set for " + service + " within " + startTimeout.toMillis()
          + " ms: etcd at " + registry.config().endpoints() + " did not answer; start etcd (./muster etcd) or check"
          + " --endpoints", null);
    }
    stopped.await();
    MusterException refused = failure.get();
    if (refused != null) { // etcd refused the cache after its first set (e.g. a permission revoked): exit 5
      Runtime.getRuntime().removeShutdownHook(stopper);
      registry.close();
      throw refused;
    }
    return 0;
  }

  /**
   * Prints each change; runs on the cache's notifier (one listener call at a time, in order, on a delivery-pool
   * thread).
   */
  private final class Printer implements EndpointListener {
    private final PrintWriter out;
    private final EndpointCache cache;

    Printer(PrintWriter out, EndpointCache cache) {
      this.out = out;
      this.cache = cache;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      String event = delta.kind().name().toLowerCase(java.util.Locale.ROOT);
      if (json) {
        ObjectNode node = line(event, set);
        node.put("added", delta.added().size());
        node.put("removed", delta.removed().size());
        node.put("changed", delta.changed().size());
        JsonLines.print(out, withInstances(node, set));
      } else {
        plain(event + " revision " + set.revision() + ": " + set.size() + " instance(s) (+" + delta.added().size()
            + " -" + delta.removed().size() + " ~" + delta.changed().size() + ")" + excluded(), set);
      }
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      if (json) {
        ObjectNode node = line("stale", set);
        node.put("since", JsonLines.ts(since));
        node.put("reason", reason);
        JsonLines.print(out, withInstances(node, set));
      } else {
        plain("stale since " + JsonLines.ts(since) + " (" + reason + "); serving the last " + set.size()
            + " instance(s)", null);
      }
    }

    @Override
    public void onRecovered(EndpointSet set, Duration staleFor) {
      if (json) {
        ObjectNode node = line("recovered", set);
        node.put("stale_ms", staleFor.toMillis());
        JsonLines.print(out, withInstances(node, set));
      } else {
        plain("recovered after " + staleFor.toMillis() + " ms stale", null);
      }
    }

    @Override
    public void onFailed(EndpointSet set, MusterException why) {
      failure.set(why);
      stopped.countDown();
    }

    private ObjectNode line(String event, EndpointSet set) {
      ObjectNode node = JsonLines.event(event, Instant.now());
      node.put("service", service);
      node.put("revision", set.revision());
      node.put("malformed", cache.malformedCount());
      node.put("unverified", cache.unverifiedCount());
      return node;
    }

    /** What the cache left out so far, when it left something out. */
    private String excluded() {
      long malformed = cache.malformedCount();
      long unverified = cache.unverifiedCount();
      return malformed == 0 && unverified == 0 ? ""
          : ", excluded so far: " + malformed + " malformed, " + unverified + " unverified";
    }

    private ObjectNode withInstances(ObjectNode node, EndpointSet set) {
      ArrayNode list = node.putArray("instances");
      for (Instance i : set.instances()) {
        EventLines.describe(list.addObject(), i);
      }
      return node;
    }

    private void plain(String headline, EndpointSet set) {
      synchronized (out) {
        out.println(JsonLines.ts(Instant.now()) + " " + headline);
        if (set != null) {
          for (Instance i : set.instances()) {
            out.println("  " + i.version() + " " + i.id() + " " + LsCommand.address(i) + " " + i.state()
                + " weight " + i.weight() + (i.zone() == null ? "" : " zone " + i.zone()));
          }
        }
        out.flush();
      }
    }
  }
}
