package dev.muster.console.internal;

import dev.muster.MusterException;
import dev.muster.cache.EndpointCache;
import dev.muster.console.ConsoleConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.ServiceDirectory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the console shows of the registry: the {@link ServiceDirectory}'s services (of the configured namespaces, or
 * of every namespace), each cache's changes derived into console events in the {@link EventRing}, and the pump woken
 * at each.
 *
 * <p>Threading: the directory calls {@link #added}, {@link #removed} and {@link #listing} on its own thread; each
 * cache's listener runs on that cache's notifier, one call at a time, and its deriver is confined to it. The pump
 * reads {@link #services()}, {@link #namespaces()} and the listing state from any thread (immutable copies and
 * volatile fields). No lock.
 */
final class ConsoleServices implements ServiceDirectory.Listener, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ConsoleServices.class);

  /** One watched service. */
  record Watched(String namespace, String service, EndpointCache cache) {
    String path() {
      return namespace + "/" + service;
    }
  }

  private final EventRing ring;
  private final Runnable wake;
  private final ServiceDirectory directory;
  private volatile Instant listingFailedSince;
  private volatile String listingProblem;

  ConsoleServices(EtcdRegistry registry, ConsoleConfig config, EventRing ring, Runnable wake) {
    this.ring = ring;
    this.wake = wake;
    this.directory = ServiceDirectory.builder(registry, this).namespaces(config.namespaces())
        .trustedKeys(config.trustedKeys()).relistInterval(config.directoryRefresh()).start();
  }

  @Override
  public EndpointListener added(ServiceDirectory.Service s) {
    EventDeriver deriver = new EventDeriver(s.namespace(), s.service());
    ring.add(new ConsoleEvent.Draft("service-added", s.namespace(), s.service(), "", "", "watching it"));
    wake.run();
    return new EndpointListener() {
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
  }

  @Override
  public void removed(ServiceDirectory.Service s) {
    ring.add(new ConsoleEvent.Draft("service-gone", s.namespace(), s.service(), "", "",
        "no instance is registered any more: its cache is closed"));
    wake.run();
  }

  @Override
  public void listing(Instant failedSince, String problem) {
    if (failedSince != null && listingFailedSince == null) {
      log.warn("cannot read the registry's services (the console shows what its caches hold): {}", problem);
    }
    listingFailedSince = failedSince;
    listingProblem = problem;
    wake.run();
  }

  /** The services watched now. */
  Collection<Watched> services() {
    List<Watched> all = new ArrayList<>();
    for (Map.Entry<ServiceDirectory.Service, EndpointCache> e : directory.caches().entrySet()) {
      all.add(new Watched(e.getKey().namespace(), e.getKey().service(), e.getValue()));
    }
    return all;
  }

  Watched service(String namespace, String service) {
    EndpointCache cache = directory.caches().get(new ServiceDirectory.Service(namespace, service));
    return cache == null ? null : new Watched(namespace, service, cache);
  }

  SortedSet<String> namespaces() {
    return directory.namespaces();
  }

  /** Since when reading the services has failed, or null while it works. */
  Instant listingFailedSince() {
    return listingFailedSince;
  }

  String listingProblem() {
    return listingProblem;
  }

  /** Stops the directory and releases its caches. */
  @Override
  public void close() {
    directory.close();
  }
}
