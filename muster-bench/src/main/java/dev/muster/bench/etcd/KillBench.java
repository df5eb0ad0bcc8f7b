package dev.muster.bench.etcd;

import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.LeaseRemainder;
import dev.muster.testing.LoopbackPorts;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

/**
 * kill -9 of a provider process → its instance gone from a consumer cache. Provider processes
 * ({@link MusterProvider}) log every renewal, so each sample splits by muster-testing's {@link LeaseRemainder} rule
 * into the <b>lease remainder</b> (last renewal + TTL granted − kill: time etcd must wait by contract) and
 * <b>expiry detection + delivery</b> (the rest: etcd's lessor
 * noticing the expired lease, the delete event, the cache applying and publishing it). The floor is a raw
 * jetcd watcher on the same prefix in the same run: when it saw the delete.
 *
 * <p>Providers are killed one at a time, a seeded random 0–1 s apart, so kills land anywhere in the keepalive
 * cycle. Runs on the calling thread; every child is killed by pid in {@code finally}.
 */
final class KillBench {
  private static final Duration LIMIT = Duration.ofSeconds(30);

  private final String endpoints;
  private final Plan plan;
  private final Path dir;
  private final PrintStream progress;

  KillBench(String endpoints, Plan plan, Path dir, PrintStream progress) {
    this.endpoints = endpoints;
    this.plan = plan;
    this.dir = dir;
    this.progress = progress;
  }

  void run(SideResult muster, SideResult floor) {
    progress.printf("etcd: kill -9 → gone, %d provider processes (TTL %d s)...%n", plan.killSamples(),
        plan.ttl().toSeconds());
    String service = "bench-kill";
    RegistryLayout layout = RegistryLayout.defaults();
    // Every removal, not just the first: a provider whose first lease ran out while 20 JVMs started (set-up on a
    // loaded machine) is removed and re-registered before it is killed, and that removal is not the sample.
    Map<String, List<Long>> removedAt = new ConcurrentHashMap<>();
    Map<String, List<Long>> rawDeletedAt = new ConcurrentHashMap<>();
    List<ChildProcess> providers = new ArrayList<>();
    try (EtcdRegistry consumer = EtcdRegistry.connect(EtcdConfig.of(endpoints));
         Client raw = RawEtcd.client(endpoints)) {
      EndpointCache cache = consumer.watch(CacheConfig.builder(service).build(), (EndpointSet set, EndpointDelta d) ->
          d.removed().forEach(i -> at(removedAt, i.id(), System.nanoTime())));
      Watch.Watcher watcher = RawEtcd.watchPrefix(raw, layout.servicePrefix("default", service), (key, isPut) -> {
        if (!isPut) {
          at(rawDeletedAt, layout.parseKey(key).id(), System.nanoTime());
        }
      });
      try {
        for (int i = 0; i < plan.killSamples(); i++) {
          providers.add(Jvms.start(dir, "muster-provider-kill-" + i, MusterProvider.class.getName(),
              List.of(endpoints, service, "p" + i, Integer.toString(LoopbackPorts.pick()),
                  Long.toString(plan.ttl().toSeconds()), Long.toString(plan.keepalive().toMillis()))));
        }
        // 20 JVMs starting at once on 2 cores take a while: allow 3 s each beyond the usual limit.
        Wait.until(plan.killSamples() + " providers in the cache", LIMIT.plusSeconds(3L * plan.killSamples()), () -> {
          for (ChildProcess p : providers) {
            if (!p.isAlive()) {
              throw new BenchException(p + " exited before registering: " + p.stderrTail());
            }
          }
          return cache.current().size() == plan.killSamples();
        });
        Wait.sleep(plan.keepalive().multipliedBy(2)); // a few renewals each, so the split has a last renewal
        Random random = new Random(plan.seed());
        List<Instant> killedAt = new ArrayList<>();
        List<Long> killedNanos = new ArrayList<>();
        for (ChildProcess p : providers) {
          Wait.sleep(Duration.ofMillis(random.nextInt(1000)));
          killedAt.add(Instant.now());
          killedNanos.add(System.nanoTime());
          p.kill();
        }
        Wait.until("every killed provider gone from the cache", LIMIT.plus(plan.ttl()), () -> {
          for (int i = 0; i < providers.size(); i++) {
            if (firstAfter(removedAt, "p" + i, killedNanos.get(i)).isEmpty()
                || firstAfter(rawDeletedAt, "p" + i, killedNanos.get(i)).isEmpty()) {
              return false;
            }
          }
          return true;
        });
        int lostBefore = 0;
        for (int i = 0; i < providers.size(); i++) {
          String id = "p" + i;
          if (removedAt.get(id).get(0) - killedNanos.get(i) < 0) { // in arrival order: the first is the earliest
            lostBefore++;
          }
          long gone = firstAfter(removedAt, id, killedNanos.get(i)).getAsLong() - killedNanos.get(i);
          muster.latency(Metric.KILL9_GONE).addNanos(gone);
          floor.latency(Metric.KILL9_GONE).addNanos(firstAfter(rawDeletedAt, id, killedNanos.get(i)).getAsLong()
              - killedNanos.get(i));
          Optional<Duration> leaseRemainder = LeaseRemainder.at(providers.get(i).json(), killedAt.get(i), plan.ttl());
          if (leaseRemainder.isPresent()) {
            long remainder = leaseRemainder.get().toNanos();
            muster.latency(Metric.KILL9_REMAINDER).addNanos(remainder);
            muster.latency(Metric.KILL9_DETECTION).addNanos(gone - remainder);
          } else {
            muster.note("kill -9 of " + id + ": no renewal logged before the kill; not split");
          }
        }
        if (lostBefore > 0) {
          muster.note("kill -9: " + lostBefore + " of " + providers.size() + " providers lost their first lease while"
              + " the JVMs started and re-registered before the kill; each sample is the first removal after the kill");
        }
      } finally {
        watcher.close();
        cache.close();
      }
    } finally {
      providers.forEach(ChildProcess::close);
    }
  }

  private static void at(Map<String, List<Long>> times, String id, long nanos) {
    times.computeIfAbsent(id, k -> new java.util.concurrent.CopyOnWriteArrayList<>()).add(nanos);
  }

  /** The first time recorded for {@code id} not before {@code from} (nanoTime order), if any. */
  private static java.util.OptionalLong firstAfter(Map<String, List<Long>> times, String id, long from) {
    return times.getOrDefault(id, List.of()).stream().mapToLong(Long::longValue).filter(t -> t - from >= 0).min();
  }
}
