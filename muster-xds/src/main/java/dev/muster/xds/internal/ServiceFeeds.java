package dev.muster.xds.internal;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import dev.muster.cache.EndpointCache;
import dev.muster.health.Prober;
import dev.muster.registry.Names;
import dev.muster.xds.internal.AdsStream.Resource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Every resource the server serves, for every stream: the listener, route configuration and cluster of any valid
 * service name (built once per name), and the assignments of the services some stream subscribes to, each from a
 * {@link ServiceFeed} that lives while at least one stream subscribes (its cache hold is released with the last).
 *
 * <p>Thread-safe. {@link #resource} takes no lock; {@link #subscribe} and {@link #unsubscribe} take this object's
 * monitor to add and remove feeds, never across opening or closing a feed's cache (a feed closed while it opens
 * closes what it opened: {@link ServiceFeed#open}).
 */
final class ServiceFeeds implements AdsStream.Catalog, AutoCloseable {
  /** Opens a feed's cache and prober: (service, feed) → the feed, opened. */
  interface Opener extends BiFunction<String, ServiceFeed, ServiceFeed> {}

  private final boolean zonePriorities;
  private final Function<String, Message> cluster;
  private final Opener opener;
  private final Map<String, Resource> statics = new ConcurrentHashMap<>();
  /** Written under this object's monitor; read without it. */
  private final Map<String, ServiceFeed> feeds = new ConcurrentHashMap<>();

  /**
   * @param cluster builds a service's cluster (it carries the server's ejection settings)
   * @param opener opens a new feed's cache and prober
   */
  ServiceFeeds(boolean zonePriorities, Function<String, Message> cluster, Opener opener) {
    this.zonePriorities = zonePriorities;
    this.cluster = cluster;
    this.opener = opener;
  }

  @Override
  public Resource resource(XdsType type, String name, String zone) {
    if (!Names.isValid(name)) {
      return null;
    }
    return switch (type) {
      case LISTENER -> statics.computeIfAbsent("L/" + name, k -> build(name, XdsResources.listener(name)));
      case ROUTE -> statics.computeIfAbsent("R/" + name, k -> build(name, XdsResources.route(name)));
      case CLUSTER -> statics.computeIfAbsent("C/" + name, k -> build(name, cluster.apply(name)));
      case ENDPOINT -> {
        ServiceFeed feed = feeds.get(name);
        yield feed == null ? null : feed.resource(zone);
      }
    };
  }

  private static Resource build(String name, Message m) {
    Any body = Any.pack(m);
    return new Resource(name, ContentVersion.of(body), body);
  }

  /** Subscribes {@code s} to {@code service}'s assignment, opening its feed if it is the first; false if invalid. */
  boolean subscribe(String service, ServiceFeed.Subscriber s) {
    if (!Names.isValid(service)) {
      return false;
    }
    ServiceFeed opened = null;
    synchronized (this) {
      ServiceFeed feed = feeds.get(service);
      if (feed == null) {
        feed = new ServiceFeed(service, zonePriorities);
        feeds.put(service, feed);
        opened = feed;
      }
      feed.subscribe(s);
    }
    if (opened != null) {
      opener.apply(service, opened); // the first set reaches s once the cache has it
    }
    return true;
  }

  /** Drops {@code s}'s subscription; the last one closes the feed. */
  void unsubscribe(String service, ServiceFeed.Subscriber s) {
    ServiceFeed closed = null;
    synchronized (this) {
      ServiceFeed feed = feeds.get(service);
      if (feed != null && feed.unsubscribe(s)) {
        feeds.remove(service);
        closed = feed;
      }
    }
    if (closed != null) {
      closed.close();
    }
  }

  /** How many services have a feed open. */
  int openFeeds() {
    return feeds.size();
  }

  @Override
  public void close() {
    List<ServiceFeed> all;
    synchronized (this) {
      all = List.copyOf(feeds.values());
      feeds.clear();
    }
    all.forEach(ServiceFeed::close);
  }

  /** Opens caches with {@code openCache} and probers with {@code startProber} (null: no probes). */
  static Opener opener(BiFunction<String, ServiceFeed, EndpointCache> openCache,
      BiFunction<String, ServiceFeed, Prober> startProber) {
    return (service, feed) -> {
      feed.open(f -> openCache.apply(service, f), f -> startProber == null ? null : startProber.apply(service, f));
      return feed;
    };
  }
}
