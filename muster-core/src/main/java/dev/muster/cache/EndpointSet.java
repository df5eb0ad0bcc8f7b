package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An immutable endpoint set: the instances of one service as of one etcd revision. Published sets are swapped
 * atomically, so a reader holding one sees a consistent view without locking.
 *
 * <p>Immutable and thread-safe. {@link #instances()} is computed once, on first use.
 */
public final class EndpointSet {
  /** The set before the first snapshot: revision 0, no instances. */
  public static final EndpointSet EMPTY = new EndpointSet(0, Map.of());

  private static final Comparator<Instance> BY_KEY = Comparator.comparing(i -> i.key().path());

  private final long revision;
  private final Map<InstanceKey, Instance> byKey;
  private volatile List<Instance> sorted;

  EndpointSet(long revision, Map<InstanceKey, Instance> byKey) {
    this.revision = revision;
    this.byKey = byKey;
  }

  /** A set holding {@code instances} at {@code revision}. */
  public static EndpointSet of(long revision, List<Instance> instances) {
    Map<InstanceKey, Instance> map = new HashMap<>();
    for (Instance i : instances) {
      map.put(i.key(), i);
    }
    return new EndpointSet(revision, Collections.unmodifiableMap(map));
  }

  /** The etcd revision this set reflects (0 before the first snapshot). */
  public long revision() {
    return revision;
  }

  /** The instances, sorted by key. */
  public List<Instance> instances() {
    List<Instance> s = sorted;
    if (s == null) {
      s = byKey.values().stream().sorted(BY_KEY).toList();
      sorted = s;
    }
    return s;
  }

  public Optional<Instance> get(InstanceKey key) {
    return Optional.ofNullable(byKey.get(key));
  }

  public boolean contains(InstanceKey key) {
    return byKey.containsKey(key);
  }

  public int size() {
    return byKey.size();
  }

  public boolean isEmpty() {
    return byKey.isEmpty();
  }

  /** The instances keyed by their registry key (unmodifiable). */
  public Map<InstanceKey, Instance> asMap() {
    return byKey;
  }

  /** Same instances (revision aside)? */
  public boolean sameInstances(EndpointSet other) {
    return byKey.equals(other.byKey);
  }

  @Override
  public String toString() {
    return "EndpointSet[revision " + revision + ", " + byKey.size() + " instance(s)]";
  }
}
