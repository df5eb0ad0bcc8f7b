package dev.muster.bench.etcd;

import dev.muster.bench.support.Wait;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The floor of the end-to-end rows: a raw jetcd put (with a lease granted beforehand, untimed) → the event at
 * {@code consumers} raw jetcd watchers, and a raw revoke → the delete at all of them. Each watcher has its own
 * client (a connection each, as consumer processes would), all in this JVM, so the times are one
 * {@link System#nanoTime()} apart. Measured in turns with a {@link VisibilityRig} by
 * {@link VisibilityRig#measureInTurns}.
 *
 * <p>Not thread-safe: one measuring thread; the watchers mark arrivals from jetcd's threads.
 */
final class FloorRig implements Rig {
  private final int consumers;
  private final String prefix;
  private final Arrivals put;
  private final Arrivals deleted;
  private final List<Client> clients = new ArrayList<>();
  private final List<Watch.Watcher> watchers = new ArrayList<>();
  private final Client writer;

  /** Connects the writer and {@code consumers} watchers of {@code prefix}, and waits until every watcher delivers. */
  FloorRig(String endpoints, String prefix, int consumers) {
    this.consumers = consumers;
    this.prefix = prefix;
    this.put = new Arrivals(consumers);
    this.deleted = new Arrivals(consumers);
    this.writer = RawEtcd.client(endpoints);
    try {
      for (int i = 0; i < consumers; i++) {
        Client c = RawEtcd.client(endpoints);
        clients.add(c);
        int consumer = i;
        watchers.add(RawEtcd.watchPrefix(c, prefix, (key, isPut) -> (isPut ? put : deleted).mark(key, consumer)));
      }
      // A watch is live once it delivers: write a probe key until every watcher has seen it.
      String probe = prefix + "probe";
      Wait.until(consumers + " raw watchers to start", VisibilityRig.LIMIT, () -> {
        RawEtcd.await("put probe", writer.getKVClient().put(RawEtcd.bytes(probe), RawEtcd.bytes("x")));
        Wait.sleep(Duration.ofMillis(20));
        return put.allSeenAt(probe).isPresent();
      });
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  @Override
  public int consumers() {
    return consumers;
  }

  /** Puts key {@code k{index}} with a fresh lease and revokes the lease, timing both until the last watcher saw it. */
  @Override
  public VisibilityRig.Sample measure(int index) {
    String key = prefix + "k" + index;
    long lease = RawEtcd.await("grant", writer.getLeaseClient().grant(60)).getID();
    long t0 = System.nanoTime();
    RawEtcd.await("put", writer.getKVClient().put(RawEtcd.bytes(key), RawEtcd.bytes("v"),
        PutOption.builder().withLeaseId(lease).build()));
    long putCall = System.nanoTime() - t0;
    Wait.until("the put of " + key + " at " + consumers + " raw watchers", VisibilityRig.LIMIT,
        () -> put.allSeenAt(key).isPresent());
    long visible = put.allSeenAt(key).getAsLong() - t0;
    long t1 = System.nanoTime();
    RawEtcd.await("revoke", writer.getLeaseClient().revoke(lease));
    long revokeCall = System.nanoTime() - t1;
    Wait.until("the delete of " + key + " at " + consumers + " raw watchers", VisibilityRig.LIMIT,
        () -> deleted.allSeenAt(key).isPresent());
    long gone = deleted.allSeenAt(key).getAsLong() - t1;
    return new VisibilityRig.Sample(visible, putCall, gone, revokeCall);
  }

  @Override
  public void close() {
    watchers.forEach(Watch.Watcher::close);
    clients.forEach(Client::close);
    writer.close();
  }
}
