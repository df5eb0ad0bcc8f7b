package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.RegistryUnavailableException;
import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.client.MusterClient;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.http.HttpCallConfig;
import dev.muster.http.MusterHttp;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryConfig;
import java.io.PrintWriter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster call SERVICE PATH}: HTTP GET through the endpoint cache, the balancer, local ejection and budgeted
 * retries (SPEC §5, §7), with {@link MusterHttp} (one {@link MusterClient} for the service). Prints one line per
 * call and a summary {@code N ok, N failed, N retried, N ejected}.
 * With {@code --count 0} it calls until SIGTERM/SIGINT (the lab's consumers), then prints the summary.
 *
 * <p>Calls start at a fixed rate on one scheduler thread and complete on HTTP threads; lines are printed as calls
 * complete, each with its sequence number. With {@code --json} the endpoint cache's changes are printed too
 * ({@code snapshot}, {@code update}, {@code resync}, {@code stale}, {@code recovered}, with the instance list as
 * {@code muster watch --json} prints it), after the balancer has taken them: the lab reads from them when this
 * caller stopped picking an instance.
 */
@Command(name = "call", description = "Call SERVICE's PATH over HTTP through balancing, local ejection and retry.")
final class CallCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Mixin
  TrustKeyOptions trust;

  @Parameters(index = "0", paramLabel = "SERVICE", description = "The service to call.")
  String service;

  @Parameters(index = "1", paramLabel = "PATH", description = "The path to GET, e.g. /hello.")
  String path;

  @Option(names = "--idempotent", description = "The call may be retried on another endpoint (default: no retry).")
  boolean idempotent;

  @Option(names = "--count", paramLabel = "N", defaultValue = "1",
      description = "How many calls; 0 = until SIGTERM/SIGINT (default ${DEFAULT-VALUE}).")
  int count;

  @Option(names = "--interval", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "Time between call starts (default ${DEFAULT-VALUE}).")
  Duration interval;

  @Option(names = "--attempt-timeout", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "Deadline of each attempt (default ${DEFAULT-VALUE}).")
  Duration attemptTimeout;

  @Option(names = "--max-retries", paramLabel = "N", defaultValue = "1",
      description = "Retries of an idempotent call, each on a different endpoint (default ${DEFAULT-VALUE}).")
  int maxRetries;

  @Option(names = "--no-eject", description = "Turn local ejection off.")
  boolean noEject;

  @Option(names = "--eject-after", paramLabel = "N", defaultValue = "1",
      description = "Consecutive local-origin failures (refused, reset, timeout) that eject (default ${DEFAULT-VALUE}).")
  int ejectAfter;

  @Option(names = "--ejection-time", paramLabel = "D", defaultValue = "30s", converter = DurationConverter.class,
      description = "Base ejection time, multiplied by the times ejected, capped at 10x (default ${DEFAULT-VALUE}).")
  Duration ejectionTime;

  @Option(names = "--max-ejection-percent", paramLabel = "N", defaultValue = "50",
      description = "Never eject more than this share of the endpoints (default ${DEFAULT-VALUE}).")
  int maxEjectionPercent;

  @Option(names = "--policy", paramLabel = "P", defaultValue = "POWER_OF_TWO",
      description = "Balancing: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  BalancerConfig.Policy policy;

  @Option(names = "--zone", paramLabel = "ZONE", description = "This caller's zone; same-zone endpoints first.")
  String zone;

  @Option(names = "--json", description = "One JSON object per call and for the summary.")
  boolean json;

  @Option(names = "--quiet", description = "Print only the summary.")
  boolean quiet;

  @Option(names = "--start-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Exit 4 when no endpoint set arrives within this time (default ${DEFAULT-VALUE}).")
  Duration startTimeout;

  @Option(names = "--clear-on-stale", hidden = true,
      description = "Negative control for the lab: while the endpoint cache is stale, call nothing (every call fails"
          + " with no endpoint) instead of calling the last known set.")
  boolean clearOnStale;

  @Override
  public Integer call() throws InterruptedException {
    if (count < 0) {
      throw new Errors.UsageException("--count is " + count + ": use 0 (until stopped) or more");
    }
    if (interval.isZero()) {
      throw new Errors.UsageException("--interval is 0: use a positive duration such as 50ms");
    }
    OutlierConfig outlier = OutlierConfig.defaults().toBuilder().enabled(!noEject)
        .consecutiveLocalOriginFailure(ejectAfter).baseEjectionTime(ejectionTime)
        .maxEjectionTime(ejectionTime.multipliedBy(10)).maxEjectionPercent(maxEjectionPercent).build();
    RetryConfig retry = RetryConfig.defaults().toBuilder().maxRetries(maxRetries).attemptTimeout(attemptTimeout)
        .build();
    BalancerConfig balancer = BalancerConfig.defaults().toBuilder().policy(policy).localZone(zone).build();
    HttpCallConfig config = HttpCallConfig.defaults().withOutlier(outlier).withRetry(retry).withBalancer(balancer)
        .withFirstSetTimeout(startTimeout);
    CacheConfig cacheConfig = CacheConfig.builder(service).namespace(common.namespace)
        .trustedKeys(trust.trustedKeys(common.namespace, service)).build(); // a bad key file exits 2 here
    PrintWriter out = spec.commandLine().getOut();
    CallLines lines = new CallLines(out, service, json, quiet, true);
    EtcdRegistry registry = EtcdRegistry.connect(common.etcdConfig());
    EndpointCache cache = registry.watch(cacheConfig);
    MusterHttp http = new MusterHttp(s -> cache, config); // one service per process: the cache above is its cache
    // First use: the service's MusterClient adds its listener (set -> balancer), so it runs before ours.
    MusterClient client = http.client(service);
    if (clearOnStale) {
      cache.addListener(new ClearOnStale(client.balancer(), cache, out));
    }
    if (json) {
      cache.addListener(new SetPrinter(out, cache));
    }
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "muster-call-ticker");
      t.setDaemon(true);
      return t;
    });
    CountDownLatch finished = new CountDownLatch(count == 0 ? 1 : count);
    Thread summaryOnStop = new Thread(() -> {
      ticker.shutdownNow();
      lines.summary(client.balancer().detector().ejections(), client.budget().refused());
    }, "muster-call-summary");
    try {
      if (!client.awaitReady(startTimeout)) {
        client.cacheFailure().ifPresent(refused -> {
          throw refused;
        });
        throw new RegistryUnavailableException("no endpoint set for " + service + " within "
            + startTimeout.toMillis() + " ms: etcd at " + registry.config().endpoints() + " did not answer; start"
            + " etcd (./muster etcd) or check --endpoints", null);
      }
      if (count == 0) {
        Runtime.getRuntime().addShutdownHook(summaryOnStop);
      }
      AtomicLong seq = new AtomicLong();
      Idempotent mode = idempotent ? Idempotent.YES : Idempotent.NO;
      ticker.scheduleAtFixedRate(() -> {
        long n = seq.incrementAndGet();
        if (count != 0 && n > count) {
          return;
        }
        Instant started = Instant.now();
        long t0 = System.nanoTime();
        http.get(service, path, mode).whenComplete((result, error) -> {
          lines.call(n, started, Duration.ofNanos(System.nanoTime() - t0), outcome(result));
          if (count != 0) {
            finished.countDown();
          }
        });
      }, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
      finished.await();
      ticker.shutdownNow();
      lines.summary(client.balancer().detector().ejections(), client.budget().refused());
      return lines.failed() == 0 ? 0 : Errors.FAILURE;
    } finally {
      http.close();
      cache.close();
      registry.close();
    }
  }

  private static CallLines.Outcome outcome(CallResult<HttpResponse<String>> result) {
    if (result == null) {
      return new CallLines.Outcome(false, 0, null, false, false, "no result", null);
    }
    int status = result.value() != null ? result.value().statusCode() : 0;
    return new CallLines.Outcome(result.ok(), status, result.endpointsTried(), result.retried(),
        result.budgetRefused(), result.failure() == null ? null : CallLines.error(result.failure()), null);
  }

  /**
   * THE NEGATIVE CONTROL ({@code --clear-on-stale}), not how Muster behaves: clear-on-error. When the cache reports
   * stale (etcd unreachable, watch broken), the balancer is given the empty set, so every call fails with no
   * endpoint although the last known instances are still serving; when the cache recovers, its set is used again.
   * The lab's {@code registry_down_keep_vs_clear} compares it with the default, keep-last-known (SPEC §4, §6).
   *
   * <p>Runs on the cache's notifier thread, after the MusterClient's own listener (which hands every published change
   * to the balancer; a change that does not fit the emptied balancer is taken as a whole set), so while stale it
   * re-clears whatever that listener restored.
   */
  private final class ClearOnStale implements EndpointListener {
    private final Balancer balancer;
    private final EndpointCache cache;
    private final PrintWriter out;
    private boolean cleared; // notifier thread only

    ClearOnStale(Balancer balancer, EndpointCache cache, PrintWriter out) {
      this.balancer = balancer;
      this.cache = cache;
      this.out = out;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      if (cleared) {
        balancer.update(EndpointSet.EMPTY); // the client's listener just handed it the set
      }
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      cleared = true;
      balancer.update(EndpointSet.EMPTY);
      note("cleared", set);
    }

    @Override
    public void onRecovered(EndpointSet set, Duration staleFor) {
      cleared = false;
      balancer.update(cache.current());
      note("restored", cache.current());
    }

    private void note(String event, EndpointSet set) {
      if (json) {
        ObjectNode node = JsonLines.event(event, Instant.now());
        node.put("service", service);
        node.put("revision", set.revision());
        node.put("negative_control", "clear-on-stale");
        JsonLines.print(out, node);
      }
    }
  }

  /** Prints the cache's changes as JSON lines (runs on the cache's notifier thread, after the balancer's update). */
  private final class SetPrinter implements EndpointListener {
    private final PrintWriter out;
    private final EndpointCache cache;

    SetPrinter(PrintWriter out, EndpointCache cache) {
      this.out = out;
      this.cache = cache;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      print(delta.kind().name().toLowerCase(java.util.Locale.ROOT), set);
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      print("stale", set);
    }

    @Override
    public void onRecovered(EndpointSet set, Duration staleFor) {
      print("recovered", set);
    }

    private void print(String event, EndpointSet set) {
      ObjectNode node = JsonLines.event(event, Instant.now());
      node.put("service", service);
      node.put("revision", set.revision());
      node.put("malformed", cache.malformedCount());
      node.put("unverified", cache.unverifiedCount());
      ArrayNode list = node.putArray("instances");
      for (Instance i : set.instances()) {
        EventLines.describe(list.addObject(), i);
      }
      JsonLines.print(out, node);
    }
  }
}
