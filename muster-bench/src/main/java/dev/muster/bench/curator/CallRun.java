package dev.muster.bench.curator;

import dev.muster.bench.support.CallLoop;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.LoopbackPorts;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.DownInstancePolicy;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.strategies.RoundRobinStrategy;

/**
 * Failures a caller sees while a provider is killed: {@link Plan#CALL_PROVIDERS} {@link CuratorProvider}s behind
 * the shared {@link CallLoop} making {@link CuratorHelloCall}'s calls through a round-robin {@code ServiceProvider} with
 * {@code DownInstancePolicy(ejectionTime, 1)}.
 * Each round kills one provider with SIGKILL and counts the calls that started in {@code [kill, kill +
 * callWindow)} and how many of them failed; then a replacement provider registers and the caller's cache must list
 * it (and no longer list the killed one) before the next round.
 *
 * <p>What Curator 5.9 does with {@code noteError} (read in {@code DownInstanceManager}): with threshold 1 the
 * instance is left out from the next {@code getInstance()} on. Its entry is dropped {@code timeout} after the
 * <em>first</em> error, and only by a purge that runs at most every {@code timeout / 2}, so an instance is left
 * out for between 1 and 1.5 × the timeout; later errors while it is out do not extend that, and there is no
 * success path that readmits it earlier. After that it is picked again until the session expires and the cache
 * drops it.
 *
 * <p>Not thread-safe: runs on the measuring thread; the caller calls on its own thread.
 */
final class CallRun {
  private static final Duration START_LIMIT = Duration.ofSeconds(60);
  private static final Duration WARM_LIMIT = Duration.ofSeconds(30);
  private static final int WARM_CALLS = 20;

  private final Plan plan;
  private final String connect;
  private final Path dir;
  private final SideResult result;
  private final PrintStream progress;
  private final List<ChildProcess> started = new ArrayList<>();

  CallRun(Plan plan, String connect, Path dir, SideResult result, PrintStream progress) {
    this.plan = plan;
    this.connect = connect;
    this.dir = dir;
    this.result = result;
    this.progress = progress;
  }

  void run() {
    progress.printf("curator: calls during kill -9 (%d providers, %d rounds of %d ms, DownInstancePolicy %d ms "
        + "threshold 1)...%n", Plan.CALL_PROVIDERS, plan.callRounds(), plan.callWindow().toMillis(),
        plan.ejectionTime().toMillis());
    String service = CuratorBench.freshService("calls");
    CuratorFramework client = null;
    ServiceDiscovery<String> discovery = null;
    ServiceProvider<String> provider = null;
    CallLoop caller = null;
    try {
      List<ChildProcess> live = new ArrayList<>();
      for (int i = 0; i < Plan.CALL_PROVIDERS; i++) {
        live.add(launch(service, i));
      }
      client = Curators.connected(connect, plan.ttl());
      discovery = Curators.discovery(client);
      ServiceProvider<String> sp = discovery.serviceProviderBuilder()
          .serviceName(service)
          .providerStrategy(new RoundRobinStrategy<>())
          .downInstancePolicy(new DownInstancePolicy(plan.ejectionTime().toMillis(), TimeUnit.MILLISECONDS, 1))
          .build();
      provider = sp;
      Curators.call("start ServiceProvider", () -> {
        sp.start();
        return null;
      });
      for (ChildProcess jvm : live) {
        CuratorProvider.awaitRegistered(jvm, START_LIMIT, () -> lists(sp, idOf(jvm)));
      }

      caller = new CallLoop(plan.callInterval(), new CuratorHelloCall(sp, plan.attemptTimeout()));
      caller.start();
      CallLoop warming = caller;
      Wait.until(WARM_CALLS + " calls in a row succeeding", WARM_LIMIT,
          () -> warming.successesInARow() >= WARM_CALLS);

      int calls = 0;
      int failed = 0;
      for (int round = 1; round <= plan.callRounds(); round++) {
        ChildProcess victim = live.remove(0);
        long killedAt = System.nanoTime();
        victim.kill();
        long windowEnd = killedAt + plan.callWindow().toNanos();
        // Calls that start just before the window ends must finish before they are counted.
        long settle = windowEnd - System.nanoTime() + plan.attemptTimeout().toNanos() + 200_000_000L;
        Wait.sleep(Duration.ofNanos(Math.max(0, settle)));
        List<CallLoop.Call> window = caller.calls(killedAt, windowEnd);
        int windowFailed = (int) CallLoop.failed(window);
        calls += window.size();
        failed += windowFailed;
        result.note(String.format("calls round %d: %d calls, %d failed %s", round, window.size(), windowFailed,
            CallLoop.failuresByReason(window)));

        if (round < plan.callRounds()) {
          ChildProcess replacement = launch(service, Plan.CALL_PROVIDERS + round - 1);
          live.add(replacement);
          String victimId = idOf(victim);
          CuratorProvider.awaitRegistered(replacement, START_LIMIT,
              () -> lists(sp, idOf(replacement)) && !lists(sp, victimId));
        }
      }
      result.value(Metric.CALLS, calls);
      result.value(Metric.CALLS_FAILED, failed);
      result.note("calls: one attempt per call (Curator has no retry); a failed attempt calls noteError(instance)");
    } catch (RuntimeException e) {
      result.failed("calls during kill -9", Curators.oneLine(e));
    } finally {
      Curators.closeQuietly(caller);
      Curators.closeQuietly(provider);
      Curators.closeQuietly(discovery);
      Curators.closeQuietly(client);
      started.forEach(ChildProcess::close);
    }
  }

  private ChildProcess launch(String service, int index) {
    ChildProcess jvm = CuratorProvider.launch(dir, idFor(service, index), connect, service, idFor(service, index),
        LoopbackPorts.pick(), plan.ttl());
    started.add(jvm);
    return jvm;
  }

  /** The child's name is its instance id (see {@link #launch}). */
  private static String idOf(ChildProcess jvm) {
    return jvm.name();
  }

  private static String idFor(String service, int index) {
    return service + "-p" + index;
  }

  private static boolean lists(ServiceProvider<String> provider, String id) {
    for (ServiceInstance<String> instance : Curators.call("list instances", provider::getAllInstances)) {
      if (instance.getId().equals(id)) {
        return true;
      }
    }
    return false;
  }
}
