package dev.muster.bench.etcd;

import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.PutOption;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * register() → visible in N consumer caches and graceful close() → gone from all N, next to the floor measured
 * in the same run: a raw jetcd put (with a lease granted beforehand) → the event at N raw jetcd watchers, and a
 * raw revoke → the delete at all N. Each consumer has its own connection (a client per consumer, as N consumer
 * processes would); all live in this JVM, so the times are one {@link System#nanoTime()} apart.
 *
 * <p>A sample is the time until the <em>last</em> of the N consumers saw the change. The time the call itself
 * took to return (register() = lease grant + put-if-absent transaction; the floor's put = one request) is
 * recorded too, so the table shows how much of a gap is etcd round trips and how much is delivery. Runs on the
 * calling thread.
 */
final class VisibleBench {
  private static final Duration LIMIT = Duration.ofSeconds(15);
  private static final Duration PAUSE = Duration.ofMillis(20);
  private static final int WARMUP = 3;

  private final String endpoints;
  private final Plan plan;
  private final PrintStream progress;

  VisibleBench(String endpoints, Plan plan, PrintStream progress) {
    this.endpoints = endpoints;
    this.plan = plan;
    this.progress = progress;
  }

  void run(SideResult muster, SideResult floor) {
    for (int n : plan.cacheCounts()) {
      progress.printf("etcd: floor put→event / revoke→delete at %d raw watcher(s), %d samples...%n", n,
          plan.visibleSamples());
      floor(n, floor);
      progress.printf("etcd: muster register()→visible / close()→gone in %d cache(s), %d samples...%n", n,
          plan.visibleSamples());
      muster(n, muster);
    }
  }

  private void floor(int n, SideResult floor) {
    String prefix = "/bench-floor/n" + n + "/";
    Arrivals put = new Arrivals(n);
    Arrivals deleted = new Arrivals(n);
    List<Client> clients = new ArrayList<>();
    List<Watch.Watcher> watchers = new ArrayList<>();
    try (Client writer = RawEtcd.client(endpoints)) {
      for (int i = 0; i < n; i++) {
        Client c = RawEtcd.client(endpoints);
        clients.add(c);
        int consumer = i;
        watchers.add(RawEtcd.watchPrefix(c, prefix, (key, isPut) ->
            (isPut ? put : deleted).mark(key, consumer)));
      }
      // A watch is live once it delivers: write a probe key until every watcher has seen it.
      String probe = prefix + "probe";
      Wait.until(n + " raw watchers to start", LIMIT, () -> {
        RawEtcd.await("put probe", writer.getKVClient().put(RawEtcd.bytes(probe), RawEtcd.bytes("x")));
        Wait.sleep(Duration.ofMillis(20));
        return put.allSeenAt(probe).isPresent();
      });
      for (int s = -WARMUP; s < plan.visibleSamples(); s++) {
        String key = prefix + "k" + (s + WARMUP);
        long lease = RawEtcd.await("grant", writer.getLeaseClient().grant(60)).getID();
        long t0 = System.nanoTime();
        RawEtcd.await("put", writer.getKVClient().put(RawEtcd.bytes(key), RawEtcd.bytes("v"),
            PutOption.builder().withLeaseId(lease).build()));
        long putCall = System.nanoTime() - t0;
        Wait.until("the put of " + key + " at " + n + " raw watchers", LIMIT, () -> put.allSeenAt(key).isPresent());
        long visible = put.allSeenAt(key).getAsLong() - t0;
        long t1 = System.nanoTime();
        RawEtcd.await("revoke", writer.getLeaseClient().revoke(lease));
        long revokeCall = System.nanoTime() - t1;
        Wait.until("the delete of " + key + " at " + n + " raw watchers", LIMIT,
            () -> deleted.allSeenAt(key).isPresent());
        long gone = deleted.allSeenAt(key).getAsLong() - t1;
        if (s >= 0) {
          floor.latency(Metric.visible(n)).addNanos(visible);
          floor.latency(Metric.gone(n)).addNanos(gone);
          floor.latency(Metric.visibleCall(n)).addNanos(putCall);
          floor.latency(Metric.goneCall(n)).addNanos(revokeCall);
        }
        Wait.sleep(PAUSE);
      }
    } finally {
      watchers.forEach(Watch.Watcher::close);
      clients.forEach(Client::close);
    }
  }

  private void muster(int n, SideResult muster) {
    String service = "bench-visible-n" + n;
    Arrivals added = new Arrivals(n);
    Arrivals removed = new Arrivals(n);
    List<EtcdRegistry> consumers = new ArrayList<>();
    List<EndpointCache> caches = new ArrayList<>();
    RegistrarConfig config = RegistrarConfig.builder().ttl(plan.ttl()).keepaliveInterval(plan.keepalive())
        .drain(Duration.ZERO).shutdownHook(false).build();
    try (EtcdRegistry provider = EtcdRegistry.connect(EtcdConfig.of(endpoints))) {
      for (int i = 0; i < n; i++) {
        EtcdRegistry r = EtcdRegistry.connect(EtcdConfig.of(endpoints));
        consumers.add(r);
        int consumer = i;
        caches.add(r.watch(CacheConfig.builder(service).build(), new EndpointListener() {
          @Override
          public void onChange(EndpointSet set, EndpointDelta delta) {
            delta.added().forEach(in -> added.mark(in.id(), consumer));
            delta.removed().forEach(in -> removed.mark(in.id(), consumer));
          }
        }));
      }
      for (EndpointCache c : caches) {
        Wait.until("the consumer caches' first sets", LIMIT, () -> c.awaitReady(Duration.ofSeconds(1)));
      }
      for (int s = -WARMUP; s < plan.visibleSamples(); s++) {
        String id = "i" + (s + WARMUP);
        Instance instance = Instance.of(service, "127.0.0.1", 10_000 + s + WARMUP).id(id);
        long t0 = System.nanoTime();
        Registration registration = provider.register(instance, config, RegistrationListener.NONE);
        long registerCall = System.nanoTime() - t0;
        Wait.until(id + " in " + n + " caches", LIMIT, () -> added.allSeenAt(id).isPresent());
        long visible = added.allSeenAt(id).getAsLong() - t0;
        long t1 = System.nanoTime();
        registration.close();
        long closeCall = System.nanoTime() - t1;
        Wait.until(id + " gone from " + n + " caches", LIMIT, () -> removed.allSeenAt(id).isPresent());
        long gone = removed.allSeenAt(id).getAsLong() - t1;
        if (s >= 0) {
          muster.latency(Metric.visible(n)).addNanos(visible);
          muster.latency(Metric.gone(n)).addNanos(gone);
          muster.latency(Metric.visibleCall(n)).addNanos(registerCall);
          muster.latency(Metric.goneCall(n)).addNanos(closeCall);
        }
        Wait.sleep(PAUSE);
      }
    } finally {
      caches.forEach(EndpointCache::close);
      consumers.forEach(EtcdRegistry::close);
    }
  }
}
