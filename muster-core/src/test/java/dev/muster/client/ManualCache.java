package dev.muster.client;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.EndpointSource;
import dev.muster.registry.Instance;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An in-memory endpoint cache whose sets the test publishes by hand (not etcd: it only plays the cache's listener
 * contract, on the publishing thread). {@link #source()} hands out this one cache and records the configs it was
 * asked for. It goes stale and recovers when the test says so ({@link #stale}, {@link #recovered}), and has a
 * config when built with one (so a client sees its {@code maxStale}).
 */
public final class ManualCache implements EndpointCache {
  private final List<EndpointListener> listeners = new CopyOnWriteArrayList<>();
  private final List<CacheConfig> opened = new CopyOnWriteArrayList<>();
  private volatile EndpointSet current = EndpointSet.EMPTY;
  private volatile boolean published;
  private volatile int closes;
  private volatile Instant staleSince;
  private final CacheConfig config;

  public ManualCache() {
    this(null);
  }

  /** A cache whose {@link #config()} is {@code config} (null: none, as a hand-fed cache may have). */
  public ManualCache(CacheConfig config) {
    this.config = config;
  }

  /** Goes stale as of {@code since}: every listener's {@code onStale}. */
  public void stale(Instant since) {
    staleSince = since;
    listeners.forEach(l -> l.onStale(current, since, "etcd unreachable: connection refused"));
  }

  /** Recovers after {@code staleFor}: every listener's {@code onRecovered}. */
  public void recovered(Duration staleFor) {
    staleSince = null;
    listeners.forEach(l -> l.onRecovered(current, staleFor));
  }

  @Override
  public Optional<CacheConfig> config() {
    return Optional.ofNullable(config);
  }

  /** Publishes {@code instances} as the next revision, to every listener. */
  public void publish(List<Instance> instances) {
    EndpointSet before = current;
    current = EndpointSet.of(before.revision() + 1, instances);
    EndpointDelta delta = EndpointDelta.between(published ? EndpointDelta.Kind.UPDATE : EndpointDelta.Kind.SNAPSHOT,
        before, current);
    published = true;
    listeners.forEach(l -> l.onChange(current, delta));
  }

  public void publish(Instance... instances) {
    publish(List.of(instances));
  }

  public int closes() {
    return closes;
  }

  public List<CacheConfig> opened() {
    return new ArrayList<>(opened);
  }

  /** A source whose every watch returns this cache, with the listeners added. */
  public EndpointSource source() {
    return (config, toAdd) -> {
      opened.add(config);
      for (EndpointListener l : toAdd) {
        addListener(l);
      }
      return this;
    };
  }

  @Override
  public EndpointSet current() {
    return current;
  }

  @Override
  public boolean isStale() {
    return staleSince != null;
  }

  @Override
  public Optional<Instant> staleSince() {
    return Optional.ofNullable(staleSince);
  }

  @Override
  public Duration lastEventAge() {
    return Duration.ZERO;
  }

  @Override
  public long resyncCount() {
    return 0;
  }

  @Override
  public long malformedCount() {
    return 0;
  }

  @Override
  public long unverifiedCount() {
    return 0;
  }

  @Override
  public boolean awaitReady(Duration timeout) {
    return published;
  }

  @Override
  public void addListener(EndpointListener listener) {
    listeners.add(listener);
    if (published) {
      listener.onChange(current, EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, current));
    }
  }

  @Override
  public void removeListener(EndpointListener listener) {
    listeners.remove(listener);
  }

  /** How many listeners it holds now. */
  public int listenerCount() {
    return listeners.size();
  }

  @Override
  public void close() {
    closes++;
  }
}
