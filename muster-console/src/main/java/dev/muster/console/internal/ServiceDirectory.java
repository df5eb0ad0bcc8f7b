package dev.muster.console.internal;

import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The console's directory: the namespaces shown (the configured ones, or all found by a keys-only listing), their
 * services (keys only), and one endpoint cache per service, opened when a service appears and closed when it goes.
 * Each cache's listener derives events into the {@link EventRing} and wakes the pump.
 *
 * <p>Threading: {@link #refresh()} and {@link #close()} run on the console's one directory thread (close after it
 * stopped), which alone writes the map of caches; it publishes an immutable copy through a volatile field that the
 * pump reads ({@link #services()}). Listeners run on each cache's notifier (one listener call at a time, in order,
 * on a delivery-pool thread); their deriver is confined to that notifier: each call sees what the one before did.
 * No lock is held anywhere here; listing is I/O on the directory thread only.
 */
final class ServiceDirectory implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServiceDirectory.class);

  /** One watched service. */
  record Watched(String namespace, String service, EndpointCache cache) {
    String path() {
      return namespace + "/" + service;
    }
  }

  private final EtcdRegistry registry;
  private final List<String> configured;
  private final EventRing ring;
  private final Runnable wake;
  private final Clock clock;
  private final Map<String, Watched> open = new TreeMap<>(); // directory thread only
  private volatile Map<String, Watched> published = Map.of();
  private volatile SortedSet<String> namespaces = new TreeSet<>();
  private volatile Instant listingFailedSince;
  private volatile String listingProblem;

  ServiceDirectory(EtcdRegistry registry, List<String> configured, EventRing ring, Runnable wake, Clock clock) {
    this.registry = registry;
    this.configured = List.copyOf(configured);
    this.ring = ring;
    this.wake = wake;
    this.clock = clock;
  }

  /** One pass: list namespaces and services, open and close caches to match. Never throws. */
  void refresh() {
    Map<String, String[]> now = new TreeMap<>();
    SortedSet<String> nss;
    try {
      nss = configured.isEmpty() ? registry.namespaces() : new TreeSet<>(configured);
      for (String ns : nss) {
        for (String service : registry.services(ns)) {
          now.put(ns + "/" + service, new String[] {ns, service});
        }
      }
    } catch (MusterException e) {
      failed(e.getMessage());
      return;
    } catch (RuntimeException e) {
      log.error("listing the registry's services failed", e);
      failed(e.toString());
      return;
    }
    if (listingFailedSince != null) {
      log.info("listing the registry's services works again");
    }
    listingFailedSince = null;
    listingProblem = null;
    namespaces = nss;
    boolean changed = false;
    for (Map.Entry<String, String[]> e : now.entrySet()) {
      if (!open.containsKey(e.getKey())) {
        open.put(e.getKey(), open(e.getValue()[0], e.getValue()[1]));
        changed = true;
      }
    }
    for (String path : List.copyOf(open.keySet())) {
      if (!now.containsKey(path)) {
        Watched w = open.remove(path);
        w.cache().close();
        ring.add(new ConsoleEvent.Draft("service-gone", w.namespace(), w.service(), "", "",
            "no instance is registered any more: its cache is closed"));
        changed = true;
      }
    }
    if (changed) {
      published = Map.copyOf(open);
      wake.run();
    }
  }

  /** The services watched now, by {@code namespace/service}. */
  Collection<Watched> services() {
    return published.values();
  }

  Watched service(String namespace, String service) {
    return published.get(namespace + "/" + service);
  }

  SortedSet<String> namespaces() {
    return namespaces;
  }

  /** Since when listing has failed, or null while it works. */
  Instant listingFailedSince() {
    return listingFailedSince;
  }

  String listingProblem() {
    return listingProblem;
  }

  private void failed(String problem) {
    if (listingFailedSince == null) {
      listingFailedSince = clock.instant();
      log.warn("cannot list the registry's services (the console shows what its caches hold): {}", problem);
      wake.run();
    }
    listingProblem = problem;
  }

  private Watched open(String namespace, String service) {
    EventDeriver deriver = new EventDeriver(namespace, service);
    EndpointListener listener = new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        ring.addAll(deriver.onChange(delta));
        wake.run();
      }

      @Override
      public void onStale(EndpointSet set, Instant since, String reason) {
        ring.add(deriver.onStale(since, reason));
        wake.run();
      }

      @Override
      public void onRecovered(EndpointSet set, Duration staleFor) {
        ring.add(deriver.onRecovered(staleFor));
        wake.run();
      }

      @Override
      public void onFailed(EndpointSet set, MusterException why) {
        ring.add(deriver.onFailed(why.getMessage()));
        wake.run();
      }
    };
    ring.add(new ConsoleEvent.Draft("service-added", namespace, service, "", "", "watching it"));
    EndpointCache cache = registry.watch(CacheConfig.builder(service).namespace(namespace).build(), listener);
    return new Watched(namespace, service, cache);
  }

  /** Closes every cache (after the directory thread stopped). */
  @Override
  public void close() {
    List<Watched> all = new ArrayList<>(open.values());
    open.clear();
    published = Map.of();
    all.forEach(w -> w.cache().close());
  }
}
