package dev.muster.bench.curator;

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
import java.util.Random;

/**
 * kill -9 → gone: {@link Plan#killSamples()} {@link CuratorProvider} processes register, one consumer cache in this
 * JVM lists them all, then they are killed with SIGKILL one at a time, a seeded random 0–1000 ms apart so the kills
 * fall at different points of ZooKeeper's once-per-tick session expiry. The sample is the time from just before
 * the SIGKILL to the consumer's cache dropping the instance: the session timeout, plus up to one tick until the
 * server's expiry check, plus the delete's commit and the watch notification. Both ends are read with
 * {@link System#nanoTime()} in this JVM.
 *
 * <p>Not thread-safe: runs on the measuring thread; the cache reports through a {@link CacheTracker}.
 */
final class KillRun {
  private static final Duration START_LIMIT = Duration.ofSeconds(60);

  private final Plan plan;
  private final String connect;
  private final Path dir;
  private final SideResult result;
  private final PrintStream progress;

  KillRun(Plan plan, String connect, Path dir, SideResult result, PrintStream progress) {
    this.plan = plan;
    this.connect = connect;
    this.dir = dir;
    this.result = result;
    this.progress = progress;
  }

  void run() {
    progress.printf("curator: kill -9 → gone (%d providers, session timeout %d ms)...%n", plan.killSamples(),
        plan.ttl().toMillis());
    String service = CuratorBench.freshService("kill9");
    CacheTracker tracker = new CacheTracker(1);
    List<ChildProcess> providers = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    try (Consumers consumer = Consumers.open(1, connect, plan.ttl(), service, tracker)) {
      int negotiated = Curators.call("read the session timeout",
          () -> consumer.firstClient().getZookeeperClient().getZooKeeper().getSessionTimeout());
      result.note("kill9→gone: session timeout requested " + plan.ttl().toMillis() + " ms, negotiated "
          + negotiated + " ms (consumer's session; providers request the same); ZooKeeper expires sessions on "
          + "500 ms ticks");

      for (int i = 0; i < plan.killSamples(); i++) {
        String id = service + "-p" + i;
        tracker.track(id);
        ids.add(id);
        providers.add(CuratorProvider.launch(dir, "curator-kill9-" + i, connect, service, id, LoopbackPorts.pick(),
            plan.ttl()));
      }
      for (int i = 0; i < providers.size(); i++) {
        String id = ids.get(i);
        CuratorProvider.awaitRegistered(providers.get(i), START_LIMIT, () -> tracker.visibleEverywhere(id));
      }

      Random random = new Random(plan.seed());
      long[] killedAt = new long[providers.size()];
      for (int i = 0; i < providers.size(); i++) {
        if (i > 0) {
          Wait.sleep(Duration.ofMillis(random.nextInt(1001)));
        }
        killedAt[i] = System.nanoTime();
        providers.get(i).kill();
      }

      Duration limit = plan.ttl().plus(Duration.ofSeconds(15));
      List<String> figures = new ArrayList<>();
      for (int i = 0; i < providers.size(); i++) {
        String id = ids.get(i);
        try {
          Wait.until(id + " gone from the cache after kill -9", limit, () -> tracker.goneEverywhere(id));
          long nanos = tracker.lastGoneAt(id) - killedAt[i];
          result.latency(Metric.KILL9_GONE).addNanos(nanos);
          figures.add(Long.toString(nanos / 1_000_000));
        } catch (RuntimeException e) {
          result.failed("kill9→gone " + id, Curators.oneLine(e));
        }
      }
      // Why a sample can be shorter than the timeout: the server counts it from the last packet it had from the
      // provider (a ping every third of the timeout when idle), then expires sessions on its tick.
      result.note("kill9→gone: " + String.join(", ", figures) + " ms; ZooKeeper counts the session timeout from "
          + "the provider's last ping (about every timeout/3) and expires on its next tick, so a sample can be up to "
          + "timeout/3 shorter or one tick longer than the timeout");
    } catch (RuntimeException e) {
      result.failed("kill9→gone", Curators.oneLine(e));
    } finally {
      providers.forEach(ChildProcess::close);
    }
  }
}
