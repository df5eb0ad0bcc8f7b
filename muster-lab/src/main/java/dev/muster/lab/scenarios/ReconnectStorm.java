package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.lab.EtcdTruth;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.registry.Instance;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.JsonLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * A reconnect storm: 50 consumers resume at once after etcd comes back. Fifty consumer JVMs would swamp the lab's
 * two cores, so the 50 consumers are endpoint caches inside the lab process, each with its OWN {@link EtcdRegistry}
 * (its own jetcd client, gRPC channel and TCP connection) — 50 independent connections and watches, one JVM.
 * Three provider processes register; once every cache holds the 3, etcd is SIGKILLed for 5 s and restarted on its
 * data. Measured per cache: from {@code restart()} returning (etcd answers again) to the cache's
 * {@code onRecovered} (negative when a cache resumed before the lab's own health probe returned). Then p1 leaves
 * (SIGTERM, drain 0) and every cache must converge to etcd's set. All 50 registries are closed at the end.
 */
public final class ReconnectStorm implements Scenario {
  private static final int CACHES = 50;

  @Override
  public String name() {
    return "reconnect_storm";
  }

  @Override
  public String shows() {
    return CACHES + " caches (own connections, in the lab JVM) resume after etcd SIGKILL 5 s + restart";
  }

  @Override
  public String seed() {
    return "beyond the seeds (unproven there): reconnect storm of many consumers after an etcd restart";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    EtcdMember member = etcd.member(0);
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3, "--drain", "0s");
    List<EtcdRegistry> registries = new ArrayList<>();
    List<Recorder> recorders = new ArrayList<>();
    List<EndpointCache> caches = new ArrayList<>();
    try {
      for (int i = 0; i < CACHES; i++) {
        EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints));
        registries.add(registry);
        Recorder r = new Recorder();
        recorders.add(r);
        caches.add(registry.watch(CacheConfig.builder("hello").build(), r));
      }
      ctx.await("all " + CACHES + " caches hold 3 instances", Duration.ofSeconds(60),
          () -> caches.stream().allMatch(c -> c.current().size() == 3));
      ctx.note(CACHES + " caches ready");

      recorders.forEach(r -> r.armed = true);
      member.kill();
      ctx.sleep(Duration.ofSeconds(5));
      long restartNanos = System.nanoTime();
      member.restart();
      long answeringNanos = System.nanoTime();
      waitUpTo(ctx, Duration.ofSeconds(30), () -> recorders.stream().allMatch(r -> r.recoveredNanos != 0));
      List<Long> recovery = recorders.stream().filter(r -> r.recoveredNanos != 0)
          .map(r -> (r.recoveredNanos - answeringNanos) / 1_000_000).sorted().toList();
      long wentStale = recorders.stream().filter(r -> r.staleLines > 0).count();
      writeLog(ctx.dir().resolve("caches.jsonl"), recorders, answeringNanos);
      long withinOneSecond = recovery.stream().filter(ms -> ms <= 1000).count();
      long resyncs = caches.stream().mapToLong(EndpointCache::resyncCount).sum();
      long reconnects = registries.stream().mapToLong(EtcdRegistry::reconnects).sum();

      // p1 must be back on etcd before it leaves, or its revoke (and the change the caches should see) fails
      ChildProcess p1 = f.provider(1);
      ctx.await("p1 reconnected to etcd", Duration.ofSeconds(20), () -> p1.json().has("reconnected")
          || p1.json().has("reregistered") || !p1.json().has("unreachable"));
      f.provider(1).terminate();
      ctx.await("p1 revoked", Duration.ofSeconds(20), () -> f.provider(1).json().has("revoked"));
      Instant revoked = JsonLog.ts(f.provider(1).json().events("revoked").get(0));
      List<String> truth = EtcdTruth.ids(endpoints, "hello");
      waitUpTo(ctx, Duration.ofSeconds(30), () -> caches.stream().allMatch(c -> ids(c.current()).equals(truth)));
      long converged = caches.stream().filter(c -> ids(c.current()).equals(truth)).count();
      long slowestChange = recorders.stream().filter(r -> r.lastChange != null)
          .mapToLong(r -> Fleet.millis(revoked, r.lastChange)).max().orElse(-1);

      boolean allRecovered = recovery.size() == CACHES;
      long max = allRecovered ? recovery.get(recovery.size() - 1) : -1;
      boolean pass = allRecovered && converged == CACHES && truth.equals(List.of("p2", "p3")) && max <= 3000;
      String figures = String.format("%d in-process caches, each with its own EtcdRegistry (jetcd client and"
              + " connection), one JVM; etcd SIGKILL 5 s, restart took %d ms to answer; %d of %d went stale, %d of"
              + " %d recovered; recovery after etcd answered (restart() returned; negative = before) min %d /"
              + " median %d / max %d ms (%d within 1 s); %d resync(s), %d client replacement(s); after p1 left: %d of"
              + " %d caches equal to etcd %s, the last %d ms after p1's revoke",
          CACHES, (answeringNanos - restartNanos) / 1_000_000, wentStale, CACHES, recovery.size(), CACHES,
          recovery.isEmpty() ? -1 : recovery.get(0), recovery.isEmpty() ? -1 : recovery.get(recovery.size() / 2),
          max, withinOneSecond, resyncs, reconnects, converged, CACHES, truth, slowestChange);
      return ScenarioResult.of(this, pass, figures, "all " + CACHES + " recover, the slowest within 3 s of etcd"
          + " answering (SPEC target 1 s, on a shared 2-core machine), all converge to etcd's set after a change");
    } finally {
      for (EtcdRegistry r : registries) {
        try {
          r.close();
        } catch (RuntimeException e) {
          ctx.note("closing a registry failed: " + e.getMessage());
        }
      }
    }
  }

  /** One line per cache: when it went stale and recovered (wall clock), and its recovery after etcd answered. */
  private static void writeLog(Path file, List<Recorder> recorders, long answeringNanos) {
    ObjectMapper json = new ObjectMapper();
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < recorders.size(); i++) {
      Recorder r = recorders.get(i);
      ObjectNode line = json.createObjectNode().put("event", "cache_recovered").put("cache", i)
          .put("stale_lines", r.staleLines);
      line.put("ts", r.recoveredAt == null ? null : r.recoveredAt.toString());
      if (r.recoveredNanos != 0) {
        line.put("recovery_ms", (r.recoveredNanos - answeringNanos) / 1_000_000);
      }
      sb.append(line).append('\n');
    }
    try {
      Files.writeString(file, sb.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** Waits until {@code condition} holds or {@code limit} passed; does not fail, the caller counts. */
  private static void waitUpTo(LabContext ctx, Duration limit, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      ctx.sleep(Duration.ofMillis(20));
    }
  }

  private static List<String> ids(EndpointSet set) {
    return set.instances().stream().map(Instance::id).sorted().toList();
  }


  /**
   * What one cache told its listener once armed: the first recovery (monotonic nanos), stale lines, and when the
   * set last changed. Called by that cache's notifier only (one call at a time, on a delivery-pool thread); read by
   * the scenario thread.
   */
  private static final class Recorder implements EndpointListener {
    volatile boolean armed;
    volatile long recoveredNanos;
    volatile Instant recoveredAt;
    volatile int staleLines;
    volatile Instant lastChange;

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      if (armed) {
        lastChange = Instant.now();
      }
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      if (armed) {
        staleLines++;
      }
    }

    @Override
    public void onRecovered(EndpointSet set, Duration staleFor) {
      if (armed && recoveredNanos == 0) {
        recoveredAt = Instant.now();
        recoveredNanos = System.nanoTime();
      }
    }
  }
}
