package dev.muster.xds.internal;

import com.google.protobuf.Any;
import dev.muster.MusterException;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.health.Prober;
import dev.muster.registry.InstanceKey;
import dev.muster.xds.internal.AdsStream.Resource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One service's assignment as the streams that subscribe to it see it: its shared endpoint cache's set, the probes'
 * verdicts (when the server probes), rendered once per change and client zone and shared by every stream.
 *
 * <p>Thread-safe. The cache calls {@link #onChange} on its notifier (one call at a time); the prober calls
 * {@link #probeChanged} under its endpoint's monitor and {@link #settled} after it; streams call {@link #resource}
 * on their own executors; {@link #open} and {@link #close} take a lifecycle lock of their own (opening a shared
 * cache starts it, without waiting for etcd). A change replaces the immutable {@link View} (under this object's monitor, which guards
 * nothing else and is never held across I/O or a subscriber), then tells each subscriber, which only queues a task
 * on its stream. While the cache is stale the last set stays served: staleness changes nothing here.
 */
final class ServiceFeed implements EndpointListener, Prober.Sink, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServiceFeed.class);
  /**
   * The lab's negative control, never for use: with this system property {@code true}, a feed serves the first set
   * it gets and ignores every later change, as a control plane fed by a static snapshot would
   * ({@code muster xds --no-push}, hidden).
   */
  static final String NO_PUSH_PROPERTY = "muster.xds.negativeControl.noPush";
  private static final boolean NO_PUSH = Boolean.getBoolean(NO_PUSH_PROPERTY);
  /**
   * The lab's other negative control, never for use: with this system property {@code true}, a feed whose cache goes
   * stale pushes an empty assignment, as an xDS server that treats its own error as "no endpoints" does
   * ({@code muster xds --empty-on-stale}, hidden); the set comes back when the cache recovers.
   */
  static final String EMPTY_ON_STALE_PROPERTY = "muster.xds.negativeControl.emptyOnStale";
  private static final boolean EMPTY_ON_STALE = Boolean.getBoolean(EMPTY_ON_STALE_PROPERTY);

  /** A stream subscribed to this service's assignment. */
  interface Subscriber {
    /** This service's assignment changed; called on the changer's thread, so it must only hand the news on. */
    void assignmentChanged();
  }

  /**
   * What the streams see: the set, the probe-failed ids, when this view was made ({@link System#nanoTime}: the stamp
   * a stream's push-to-ACK time starts from), and the assignments rendered from them so far, by zone.
   */
  private record View(EndpointSet set, Set<String> down, long since, ConcurrentHashMap<String, Resource> byZone) {}

  private final String service;
  private final boolean zonePriorities;
  private final Set<Subscriber> subscribers = ConcurrentHashMap.newKeySet();
  private final Set<String> down = ConcurrentHashMap.newKeySet();
  private volatile View view; // null until the cache's first set
  private volatile boolean probesMoved;
  private final Object lifecycle = new Object();
  private boolean closed; // guarded by lifecycle
  private EndpointCache hold; // guarded by lifecycle
  private volatile Prober prober; // set before the cache opens, so before any onChange reads it

  ServiceFeed(String service, boolean zonePriorities) {
    this.service = service;
    this.zonePriorities = zonePriorities;
  }

  /**
   * Opens the service's cache (and prober) with this feed as their listener and sink: {@code openCache} returns a
   * hold on the shared cache, {@code startProber} the prober or null for none.
   */
  void open(Function<ServiceFeed, EndpointCache> openCache, Function<ServiceFeed, Prober> startProber) {
    synchronized (lifecycle) {
      if (closed) {
        return; // the last subscriber left before the feed opened
      }
      prober = startProber.apply(this);
      hold = openCache.apply(this);
    }
  }

  String service() {
    return service;
  }

  void subscribe(Subscriber s) {
    subscribers.add(s);
  }

  /** Whether no stream subscribes any more. */
  boolean unsubscribe(Subscriber s) {
    subscribers.remove(s);
    return subscribers.isEmpty();
  }

  /** The assignment as a client in {@code zone} (null: none) sees it; null before the cache's first set. */
  Resource resource(String zone) {
    View v = view;
    if (v == null) {
      return null;
    }
    String z = zonePriorities && zone != null ? zone : "";
    return v.byZone().computeIfAbsent(z, k -> render(v, k.isEmpty() ? null : k));
  }

  private Resource render(View v, String zone) {
    Any body = Any.pack(XdsResources.assignment(service, v.set().instances(), v.down(), zone, zonePriorities));
    return new Resource(service, ContentVersion.of(body), body, v.since());
  }

  @Override
  public void onChange(EndpointSet set, EndpointDelta delta) {
    if (NO_PUSH && view != null) {
      return; // the negative control: the first set only
    }
    if (prober != null) {
      prober.update(set, delta);
    }
    publish(set);
  }

  @Override
  public void onStale(EndpointSet set, Instant since, String reason) {
    if (EMPTY_ON_STALE) {
      log.warn("{}: the registry is unreachable ({}); NEGATIVE CONTROL: an empty assignment is pushed", service,
          reason);
      synchronized (this) {
        view = new View(EndpointSet.of(set.revision(), List.of()), Set.of(), System.nanoTime(),
            new ConcurrentHashMap<>());
      }
      subscribers.forEach(Subscriber::assignmentChanged);
      return;
    }
    log.warn("{}: the registry is unreachable ({}); the last assignment stays served", service, reason);
  }

  @Override
  public void onRecovered(EndpointSet set, Duration staleFor) {
    log.info("{}: the registry is reachable again after {}", service, staleFor);
    if (EMPTY_ON_STALE) {
      synchronized (this) {
        view = new View(set, Set.copyOf(down), System.nanoTime(), new ConcurrentHashMap<>());
      }
      subscribers.forEach(Subscriber::assignmentChanged);
    }
  }

  @Override
  public void onFailed(EndpointSet set, MusterException why) {
    log.error("{}: the cache stopped ({}); its last assignment stays served, and no change will follow", service,
        why.getMessage());
  }

  @Override
  public void probeChanged(InstanceKey key, boolean isDown) {
    boolean moved = isDown ? down.add(key.id()) : down.remove(key.id());
    if (moved) {
      probesMoved = true;
    }
  }

  @Override
  public void settled() {
    if (probesMoved) {
      probesMoved = false;
      View v = view;
      if (v != null) {
        publish(v.set());
      }
    }
  }

  /** Replaces the view with {@code set} and the verdicts as they are now, then tells the subscribers. */
  private void publish(EndpointSet set) {
    synchronized (this) {
      View v = view;
      // a verdict's republish must not put back a set older than the cache's latest
      EndpointSet latest = v != null && v.set().revision() > set.revision() ? v.set() : set;
      view = new View(latest, Set.copyOf(down), System.nanoTime(), new ConcurrentHashMap<>());
    }
    if (log.isDebugEnabled()) {
      log.debug("{}: revision {}, {} to {} streams", service, set.revision(), set.instances().stream()
          .map(i -> i.id() + "=" + i.state()).toList(), subscribers.size());
    }
    for (Subscriber s : subscribers) {
      s.assignmentChanged();
    }
  }

  /** Releases the cache hold and stops the prober. */
  @Override
  public void close() {
    synchronized (lifecycle) {
      closed = true;
      if (hold != null) {
        hold.close();
      }
      if (prober != null) {
        prober.close();
      }
    }
  }
}
