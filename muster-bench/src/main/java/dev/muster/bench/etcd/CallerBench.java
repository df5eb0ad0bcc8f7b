package dev.muster.bench.etcd;

import dev.muster.balance.BalancerConfig;
import dev.muster.bench.support.CallLoop;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.http.HttpCallConfig;
import dev.muster.http.MusterHttp;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.InstanceKey;
import dev.muster.retry.RetryConfig;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.LoopbackPorts;
import java.io.PrintStream;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Failures a caller sees while a provider is killed with SIGKILL: three provider processes, one caller in this
 * JVM calling {@code GET /hello} every {@link Plan#callInterval()} through {@link MusterHttp} with ejection
 * (after one failure, for {@link Plan#ejectionTime()}) and one retry on another endpoint, round robin — the lab's
 * consumer A. Each round kills one provider and counts the calls started in the following
 * {@link Plan#callWindow()} and how many of them failed as the caller saw them; then a replacement provider
 * joins before the next round.
 *
 * <p>The caller runs on its own thread ({@link CallLoop}); everything else on the calling thread.
 */
final class CallerBench {
  private static final Duration LIMIT = Duration.ofSeconds(30);

  private final String endpoints;
  private final Plan plan;
  private final Path dir;
  private final PrintStream progress;

  CallerBench(String endpoints, Plan plan, Path dir, PrintStream progress) {
    this.endpoints = endpoints;
    this.plan = plan;
    this.dir = dir;
    this.progress = progress;
  }

  void run(SideResult muster) {
    progress.printf("etcd: calls through kill -9 (%d round(s), ejection + 1 retry)...%n", plan.callRounds());
    String service = "bench-calls";
    OutlierConfig outlier = OutlierConfig.defaults().toBuilder().consecutiveLocalOriginFailure(1)
        .baseEjectionTime(plan.ejectionTime()).maxEjectionTime(plan.ejectionTime().multipliedBy(10)).build();
    RetryConfig retry = RetryConfig.defaults().toBuilder().maxRetries(1).attemptTimeout(plan.attemptTimeout()).build();
    BalancerConfig balancer = BalancerConfig.defaults().toBuilder().policy(BalancerConfig.Policy.ROUND_ROBIN).build();
    HttpCallConfig config = HttpCallConfig.defaults().withOutlier(outlier).withRetry(retry).withBalancer(balancer);
    List<ChildProcess> providers = new ArrayList<>();
    try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints))) {
      EndpointCache cache = registry.watch(CacheConfig.builder(service).build());
      MusterHttp http = MusterHttp.builder(s -> cache).config(config).build();
      CallLoop calls = new CallLoop(plan.callInterval(), () -> {
        try {
          CallResult<HttpResponse<String>> r = http.get(service, "/hello", Idempotent.YES)
              .get(plan.attemptTimeout().multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS);
          return r.ok() ? null : "failed after " + r.attempts() + " attempt(s)";
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return "interrupted";
        } catch (Exception e) {
          return e.getClass().getSimpleName();
        }
      });
      try {
        for (int i = 0; i < Plan.CALL_PROVIDERS; i++) {
          providers.add(start(service, i));
        }
        Wait.until(Plan.CALL_PROVIDERS + " providers in the caller's cache", LIMIT,
            () -> cache.current().size() == Plan.CALL_PROVIDERS);
        calls.start();
        Wait.until("20 calls in a row to succeed", LIMIT, () -> calls.successesInARow() >= 20);
        long total = 0;
        long failed = 0;
        for (int round = 0; round < plan.callRounds(); round++) {
          ChildProcess victim = providers.get(round % Plan.CALL_PROVIDERS);
          long kill = System.nanoTime();
          victim.kill();
          Wait.sleep(plan.callWindow().plusMillis(500)); // the window, plus time for its last calls to end
          List<CallLoop.Call> window = calls.calls(kill, kill + plan.callWindow().toNanos());
          total += window.size();
          failed += CallLoop.failed(window);
          muster.note("calls round " + (round + 1) + ": " + window.size() + " calls, " + CallLoop.failed(window)
              + " failed " + CallLoop.failuresByReason(window));
          int next = Plan.CALL_PROVIDERS + round;
          ChildProcess replacement = start(service, next);
          providers.set(round % Plan.CALL_PROVIDERS, replacement);
          InstanceKey key = new InstanceKey("default", service, "v1", "c" + next);
          Wait.until("replacement provider c" + next + " in the cache", LIMIT, () -> cache.current().contains(key));
          Wait.sleep(plan.ejectionTime()); // let any ejection of the killed one lapse before the next round
        }
        muster.value(Metric.CALLS, total);
        muster.value(Metric.CALLS_FAILED, failed);
      } finally {
        calls.close();
        http.close();
        cache.close();
      }
    } finally {
      providers.forEach(ChildProcess::close);
    }
  }

  private ChildProcess start(String service, int i) {
    return Jvms.start(dir, "muster-provider-calls-" + i, MusterProvider.class.getName(),
        List.of(endpoints, service, "c" + i, Integer.toString(LoopbackPorts.pick()),
            Long.toString(plan.ttl().toSeconds()), Long.toString(plan.keepalive().toMillis())));
  }
}
