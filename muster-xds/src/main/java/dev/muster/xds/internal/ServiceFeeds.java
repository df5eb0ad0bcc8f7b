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
 * service name (built once per name, for the first {@code 3 × maxFeeds} names asked; later names are built at each
 * request, so clients naming junk cannot grow the server), and the assignments of the services some stream
 * subscribes to, each from a {@link ServiceFeed} that lives while at least one stream subscribes (its cache hold is
 * released with the last), at most {@code maxFeeds} at once.
 *
 * <p>Thread-safe. {@link #resource} takes no lock; {@link #subscribe} and {@link #unsubscribe} take this object's
 * monitor to add and remove feeds, never across opening or closing a feed's cache (a feed closed while it opens
 * closes what it opened: {@link ServiceFeed#open}).
 */
final class ServiceFeeds implements AdsStream.Catalog, AutoCloseable {
  /** Opens a feed's cache and prober: (service, feed) → the feed, opened. */
  interface Opener extends BiFunction<String, ServiceFeed, ServiceFeed> {}

  /** What {@link #subscribe} did. */
  enum Subscription {
    SUBSCRIBED,
    /** Not a valid service name: nothing to follow (the stream sees no assignment for it). */
    INVALID,
    /** It would open a feed beyond the limit: not subscribed. */
    FULL
  }

  private final boolean zonePriorities;
  private final Function<String, Message> cluster;
  private final Opener opener;
  private final int maxFeeds;
  private final Map<String, Resource> statics = new ConcurrentHashMap<>();
  /** Written under this object's monitor; read without it. */
  private final Map<String, ServiceFeed> feeds = new ConcurrentHashMap<>();

  /**
   * @param cluster builds a service's cluster (it carries the server's ejection settings)
   * @param opener opens a new feed's cache and prober
   * @param maxFeeds services followed at once, at most
   */
  ServiceFeeds(boolean zonePriorities, Function<String, Message> cluster, Opener opener, int maxFeeds) {
    this.zonePriorities = zonePriorities;
    this.cluster = cluster;
    this.opener = opener;
    this.maxFeeds = maxFeeds;
  }

  @Override
  public Resource resource(XdsType type, String name, String zone) {
    if (!Names.isValid(name)) {
      return null;
    }
    return switch (type) {
      case LISTENER -> fixed("L/" + name, () -> XdsResources.listener(name));
      case ROUTE -> fixed("R/" + name, () -> XdsResources.route(name));
      case CLUSTER -> fixed("C/" + name, () -> cluster.apply(name));
      case ENDPOINT -> {
        ServiceFeed feed = feeds.get(name);
        yield feed == null ? null : feed.resource(zone);
      }
    };
  }

  /** A resource that depends on its name only ({@code key}: type letter and name), cached while there is room. */
  private Resource fixed(String key, java.util.function.Supplier<Message> message) {
    Resource cached = statics.get(key);
    if (cached != null) {
      return cached;
    }
    Any body = Any.pack(message.get());
    Resource built = new Resource(key.substring(2), ContentVersion.of(body), body);
    if (statics.size() < 3L * maxFeeds) {
      statics.putIfAbsent(key, built);
    }
    return built;
  }

  /** Subscribes {@code s} to {@code service}'s assignment, opening its feed if it is the first. */
  Subscription subscribe(String service, ServiceFeed.Subscriber s) {
    if (!Names.isValid(service)) {
      return Subscription.INVALID;
    }
    ServiceFeed opened = null;
    synchronized (this) {
      ServiceFeed feed = feeds.get(service);
      if (feed == null) {
        if (feeds.size() >= maxFeeds) {
          return Subscription.FULL;
        }
        feed = new ServiceFeed(service, zonePriorities);
        feeds.put(service, feed);
        opened = feed;
      }
      feed.subscribe(s);
    }
    if (opened != null) {
      opener.apply(service, opened); // the first set reaches s once the cache has it
    }
    return Subscription.SUBSCRIBED;
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

  /** Services followed at once, at most. */
  int maxFeeds() {
    return maxFeeds;
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
