package dev.muster.http;

import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** An endpoint cache whose set the test sets by hand; listeners are called on the caller's thread. */
final class StaticCache implements EndpointCache {
  private final List<EndpointListener> listeners = new CopyOnWriteArrayList<>();
  private volatile EndpointSet current = EndpointSet.EMPTY;

  void publish(List<Instance> instances) {
    EndpointSet before = current;
    current = EndpointSet.of(before.revision() + 1, instances);
    EndpointDelta delta = EndpointDelta.between(EndpointDelta.Kind.UPDATE, before, current);
    listeners.forEach(l -> l.onChange(current, delta));
  }

  @Override
  public EndpointSet current() {
    return current;
  }

  @Override
  public boolean isStale() {
    return false;
  }

  @Override
  public Optional<Instant> staleSince() {
    return Optional.empty();
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
  public boolean awaitReady(Duration timeout) {
    return current != EndpointSet.EMPTY;
  }

  @Override
  public void addListener(EndpointListener listener) {
    listeners.add(listener);
    if (current != EndpointSet.EMPTY) {
      listener.onChange(current, EndpointDelta.between(EndpointDelta.Kind.SNAPSHOT, EndpointSet.EMPTY, current));
    }
  }

  @Override
  public void close() {}
}
