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
 * <p>The loop and its options are {@link CallLoop}'s; calls complete on HTTP threads. With {@code --json} the
 * endpoint cache's changes are printed too
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

  @Mixin
  CallLoop loop;

  @Mixin
  HealthOptions health;

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

  @Option(names = "--start-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Exit 4 when no endpoint set arrives within this time (default ${DEFAULT-VALUE}).")
  Duration startTimeout;

  @Option(names = "--clear-on-stale", hidden = true,
      description = "Negative control for the lab: while the endpoint cache is stale, call nothing (every call fails"
          + " with no endpoint) instead of calling the last known set.")
  boolean clearOnStale;

  @Override
  public Integer call() throws InterruptedException {
    loop.validate();
    health.validate();
    OutlierConfig outlier = OutlierConfig.defaults().toBuilder().enabled(!noEject)
        .consecutiveLocalOriginFailure(ejectAfter).baseEjectionTime(ejectionTime)
        .maxEjectionTime(ejectionTime.multipliedBy(10)).maxEjectionPercent(maxEjectionPercent).build();
    RetryConfig retry = RetryConfig.defaults().toBuilder().maxRetries(loop.maxRetries)
        .attemptTimeout(loop.attemptTimeout).build();
    BalancerConfig balancer = health.balancer(BalancerConfig.defaults().toBuilder().policy(policy).localZone(zone))
        .build();
    PrintWriter out = spec.commandLine().getOut();
    HttpCallConfig config = health.apply(HttpCallConfig.defaults().withOutlier(outlier).withRetry(retry)
        .withBalancer(balancer).withFirstSetTimeout(startTimeout), out, loop.json);
    CacheConfig cacheConfig = CacheConfig.builder(service).namespace(common.namespace)
        .trustedKeys(trust.trustedKeys(common.namespace, service)).build(); // a bad key file exits 2 here
    CallLines lines = new CallLines(out, service, loop.json, loop.quiet, true);
    EtcdRegistry registry = EtcdRegistry.connect(common.etcdConfig());
    EndpointCache cache = registry.watch(cacheConfig);
    MusterHttp http = MusterHttp.builder(s -> cache).config(config).build(); // one service: the cache above
    // First use: the service's MusterClient adds its listener (set -> balancer), so it runs before ours.
    MusterClient client = http.client(service);
    if (clearOnStale) {
      cache.addListener(new ClearOnStale(client.balancer(), cache, out));
    }
    if (loop.json) {
      cache.addListener(new SetPrinter(out, cache));
    }
    try {
      if (!client.awaitReady(startTimeout)) {
        client.cacheFailure().ifPresent(refused -> {
          throw refused;
        });
        throw new RegistryUnavailableException("no endpoint set for " + service + " within "
            + startTimeout.toMillis() + " ms: etcd at " + registry.config().endpoints() + " did not answer; start"
            + " etcd (./muster etcd) or check --endpoints", null);
      }
      Idempotent mode = idempotent ? Idempotent.YES : Idempotent.NO;
      loop.run("muster-call", (n, started, t0, done) -> http.get(service, path, mode).whenComplete((result, e) -> {
        lines.call(n, started, Duration.ofNanos(System.nanoTime() - t0), outcome(result));
        done.run();
      }), () -> lines.summary(client.balancer().detector().ejections(), client.budget().refused()));
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
   * <p>Runs on the cache's notifier (one listener call at a time, in order, on a delivery-pool thread), after the
   * MusterClient's own listener (which hands every published change to the balancer; a change that does not fit the
   * emptied balancer is taken as a whole set), so while stale it re-clears whatever that listener restored.
   */
  private final class ClearOnStale implements EndpointListener {
    private final Balancer balancer;
    private final EndpointCache cache;
    private final PrintWriter out;
    private boolean cleared; // the notifier's calls only (one at a time, each sees the last)

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
      if (loop.json) {
        ObjectNode node = JsonLines.event(event, Instant.now());
        node.put("service", service);
        node.put("revision", set.revision());
        node.put("negative_control", "clear-on-stale");
        JsonLines.print(out, node);
      }
    }
  }

  /**
   * Prints the cache's changes as JSON lines; runs on the cache's notifier (one listener call at a time, in order, on
   * a delivery-pool thread), after the balancer's update.
   */
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
