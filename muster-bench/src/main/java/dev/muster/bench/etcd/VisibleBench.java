package dev.muster.bench.etcd;

import dev.muster.bench.support.Plan;
import dev.muster.bench.support.SideResult;
import dev.muster.bench.support.Wait;
import dev.muster.etcd.EtcdConfig;
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
      Wait.until(n + " raw watchers to start", VisibilityRig.LIMIT, () -> {
        RawEtcd.await("put probe", writer.getKVClient().put(RawEtcd.bytes(probe), RawEtcd.bytes("x")));
        Wait.sleep(Duration.ofMillis(20));
        return put.allSeenAt(probe).isPresent();
      });
      for (int s = -VisibilityRig.WARMUP; s < plan.visibleSamples(); s++) {
        String key = prefix + "k" + (s + VisibilityRig.WARMUP);
        long lease = RawEtcd.await("grant", writer.getLeaseClient().grant(60)).getID();
        long t0 = System.nanoTime();
        RawEtcd.await("put", writer.getKVClient().put(RawEtcd.bytes(key), RawEtcd.bytes("v"),
            PutOption.builder().withLeaseId(lease).build()));
        long putCall = System.nanoTime() - t0;
        Wait.until("the put of " + key + " at " + n + " raw watchers", VisibilityRig.LIMIT,
            () -> put.allSeenAt(key).isPresent());
        long visible = put.allSeenAt(key).getAsLong() - t0;
        long t1 = System.nanoTime();
        RawEtcd.await("revoke", writer.getLeaseClient().revoke(lease));
        long revokeCall = System.nanoTime() - t1;
        Wait.until("the delete of " + key + " at " + n + " raw watchers", VisibilityRig.LIMIT,
            () -> deleted.allSeenAt(key).isPresent());
        long gone = deleted.allSeenAt(key).getAsLong() - t1;
        if (s >= 0) {
          new VisibilityRig.Sample(visible, putCall, gone, revokeCall).addTo(floor, n);
        }
        Wait.sleep(VisibilityRig.PAUSE);
      }
    } finally {
      watchers.forEach(Watch.Watcher::close);
      clients.forEach(Client::close);
    }
  }

  private void muster(int n, SideResult muster) {
    try (VisibilityRig rig = new VisibilityRig(EtcdConfig.of(endpoints), "bench-visible-n" + n, n, plan)) {
      VisibilityRig.measureInTurns(List.of(rig), List.of(muster), plan.visibleSamples());
    }
  }
}
