package dev.muster.chaos;

import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import io.etcd.jetcd.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The invariants, checked after every step once the step's faults are over (the proxies pass, every member runs):
 *
 * <ol>
 *   <li>every open registration is registered again within {@code bound}: ACTIVE, and its key in etcd is on its
 *       current lease (a provider that is alive and reachable and lost its lease comes back);
 *   <li>every cache catches up within {@code bound} and then equals a fresh range of etcd, both now and at the
 *       cache's own revision, and is not stale;
 *   <li>what each cache published since the last quiet point obeys the listener contract with strictly increasing
 *       revisions ({@link PublicationLog}), and each published set equals etcd's state at its revision (checked by
 *       {@link PublicationChecker} with a range at that revision as soon as it is published; one compacted first is
 *       counted, not guessed);
 *   <li>no instance id is held by two keys.
 * </ol>
 * A duplicate id never overwriting its holder is checked where duplicates are attempted ({@link ScheduleRun}).
 *
 * <p>Not thread-safe: called by the schedule's thread.
 */
final class QuietPoint {
  /** One cache under test: its name, the prefix it watches, the cache and what it published. */
  record Watched(String name, String prefix, EndpointCache cache, PublicationLog log) {}

  private final Oracle oracle;
  private final String servicePrefix;
  private final List<Watched> watched;
  private final Map<Integer, Registration> registrations;
  private final PublicationChecker publications;
  private final Duration bound;

  QuietPoint(Oracle oracle, String servicePrefix, List<Watched> watched, Map<Integer, Registration> registrations,
      PublicationChecker publications, Duration bound) {
    this.oracle = oracle;
    this.servicePrefix = servicePrefix;
    this.watched = watched;
    this.registrations = registrations;
    this.publications = publications;
    this.bound = bound;
  }

  void check() {
    registrations.forEach(this::awaitRegistered);
    Oracle.Snapshot service = null;
    for (Watched w : watched) {
      Oracle.Snapshot caughtUp = awaitCaughtUp(w);
      if (w.prefix().equals(servicePrefix)) {
        service = caughtUp;
      }
    }
    for (Watched w : watched) {
      List<String> breaches = w.log().breaches();
      if (!breaches.isEmpty()) {
        throw new Divergence(String.join("; ", breaches));
      }
    }
    List<String> mismatches = publications.awaitChecked();
    if (!mismatches.isEmpty()) {
      throw new Divergence(mismatches.get(0) + (mismatches.size() > 1 ? " (and " + (mismatches.size() - 1)
          + " more)" : ""));
    }
    idsHeldOnce(service != null ? service : oracle.range(servicePrefix));
  }

  private void awaitRegistered(int n, Registration r) {
    long deadline = System.nanoTime() + bound.toNanos();
    String key = oracle.layout().instanceKey(r.instance());
    while (true) {
      RegistrationState state = r.state();
      if (state == RegistrationState.FAILED || state == RegistrationState.CLOSED) {
        throw new Divergence("registration r" + n + " is " + state + " though nobody closed it");
      }
      Optional<KeyValue> kv = oracle.get(key);
      if (state == RegistrationState.ACTIVE && kv.isPresent() && kv.get().getLease() == r.leaseId()) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new Divergence("registration r" + n + " (alive, its proxies passing) is not registered within "
            + bound.toSeconds() + " s: state " + state + ", lease " + Long.toHexString(r.leaseId()) + ", key "
            + kv.map(k -> "on lease " + Long.toHexString(k.getLease())).orElse("absent"));
      }
      Oracle.sleep(Duration.ofMillis(50));
    }
  }

  /** Returns the range of etcd the cache was found equal to. */
  private Oracle.Snapshot awaitCaughtUp(Watched w) {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      Oracle.Snapshot now = oracle.range(w.prefix());
      EndpointSet set = w.cache().current();
      if (!w.cache().isStale() && set.revision() <= now.revision() && set.asMap().equals(now.instances())) {
        Optional<Oracle.Snapshot> atOwn = oracle.rangeAt(w.prefix(), set.revision());
        if (atOwn.isPresent() && !atOwn.get().instances().equals(set.asMap())) {
          throw new Divergence("cache " + w.name() + " at revision " + set.revision() + " is not etcd's state at"
              + " that revision: " + difference(set.asMap(), atOwn.get().instances()));
        }
        return now;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new Divergence("cache " + w.name() + " (revision " + set.revision() + ", " + set.size() + " instances"
            + (w.cache().isStale() ? ", stale" : "") + ") still differs from etcd (revision " + now.revision() + ", "
            + now.instances().size() + " instances) after " + bound.toSeconds() + " s: "
            + difference(set.asMap(), now.instances()));
      }
      Oracle.sleep(Duration.ofMillis(30));
    }
  }

  private static void idsHeldOnce(Oracle.Snapshot service) {
    Map<String, List<String>> byId = new HashMap<>();
    for (String key : service.leases().keySet()) {
      String id = key.substring(key.lastIndexOf('/') + 1);
      byId.computeIfAbsent(id, k -> new ArrayList<>()).add(key);
    }
    byId.forEach((id, keys) -> {
      if (keys.size() > 1) {
        throw new Divergence("instance id " + id + " is held by " + keys.size() + " keys: " + keys);
      }
    });
  }

  /** What differs between a cache's set and etcd's, by instance id (at most a few of each). */
  static String difference(Map<InstanceKey, Instance> cache, Map<InstanceKey, Instance> etcd) {
    Set<String> missing = new TreeSet<>();
    Set<String> extra = new TreeSet<>();
    Set<String> changed = new TreeSet<>();
    etcd.forEach((k, v) -> {
      if (!cache.containsKey(k)) {
        missing.add(k.version() + "/" + k.id());
      } else if (!cache.get(k).equals(v)) {
        changed.add(k.version() + "/" + k.id());
      }
    });
    cache.keySet().stream().filter(k -> !etcd.containsKey(k)).forEach(k -> extra.add(k.version() + "/" + k.id()));
    return "missing " + missing + ", extra (deleted in etcd) " + extra + ", different value " + changed;
  }
}
