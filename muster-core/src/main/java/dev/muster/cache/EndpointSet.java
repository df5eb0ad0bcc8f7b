package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.pcollections.TreePMap;

/**
 * An immutable endpoint set: the instances of one service as of one etcd revision. Published sets are swapped
 * atomically, so a reader holding one sees a consistent view without locking.
 *
 * <p>Immutable and thread-safe. {@link #instances()} is built once, on first use (two threads asking at once may
 * both build it; they build equal lists).
 *
 * <p>Representation: a persistent (structurally shared) sorted map, pcollections' {@link TreePMap}, ordered by
 * the key's path ({@link KeyPathOrder}). {@code plus} and {@code minus} return a new map that shares every node
 * with the old one except the O(log n) on the path to the changed key, and no node is ever modified. So
 * The cache builds the next set (with {@link #plus}, {@link #minus}) in O(changed × log n) instead of copying the whole map, and the
 * set it replaced stays exactly as it was: a reader still holding it sees nothing of the change.
 *
 * <p>Why a tree rather than pcollections' hash trie ({@code HashTreePMap}, O(log32 n) lookups): the order gives
 * {@link #instances()} without a sort (one O(n) in-order walk, once per set, for whoever asks — balancers, the
 * snapshot store) and lets {@link EndpointDelta#between} diff two sets in one merged walk. A lookup costs about
 * log2(n) key comparisons (14 at 10,000 instances), which {@link KeyPathOrder} makes without allocating.
 */
public final class EndpointSet {
  /** The set before the first snapshot: revision 0, no instances. */
  public static final EndpointSet EMPTY = new EndpointSet(0, TreePMap.empty(KeyPathOrder.INSTANCE));

  private final long revision;
  private final TreePMap<InstanceKey, Instance> byKey;
  private volatile List<Instance> sorted;

  /** {@code byKey} must be ordered by {@link KeyPathOrder}: {@link EndpointDelta#between} relies on it. */
  EndpointSet(long revision, TreePMap<InstanceKey, Instance> byKey) {
    if (byKey.comparator() != KeyPathOrder.INSTANCE) {
      throw new IllegalArgumentException("an endpoint set's map must be ordered by KeyPathOrder, not by "
          + byKey.comparator());
    }
    this.revision = revision;
    this.byKey = byKey;
  }

  /**
   * A set holding {@code instances} at {@code revision}; of two instances with the same key, the later one wins.
   * O(n log n).
   */
  public static EndpointSet of(long revision, List<Instance> instances) {
    TreeMap<InstanceKey, Instance> map = new TreeMap<>(KeyPathOrder.INSTANCE);
    for (Instance i : instances) {
      map.put(i.key(), i);
    }
    return new EndpointSet(revision, TreePMap.fromSortedMap(map)); // O(n) from an already sorted map
  }

  /** The etcd revision this set reflects (0 before the first snapshot). */
  public long revision() {
    return revision;
  }

  /** The instances, sorted by key path ({@code namespace/service/version/id}). Immutable. */
  public List<Instance> instances() {
    List<Instance> s = sorted;
    if (s == null) {
      s = List.copyOf(byKey.values()); // the tree iterates in key order already
      sorted = s;
    }
    return s;
  }

  public Optional<Instance> get(InstanceKey key) {
    return key == null ? Optional.empty() : Optional.ofNullable(byKey.get(key));
  }

  public boolean contains(InstanceKey key) {
    return key != null && byKey.containsKey(key);
  }

  public int size() {
    return byKey.size();
  }

  public boolean isEmpty() {
    return byKey.isEmpty();
  }

  /**
   * The instances keyed by their registry key, iterated in key-path order. The map is this set's own persistent
   * map, not a copy: every mutator ({@code put}, {@code remove}, {@code clear}, and those of its views and
   * entries) throws {@link UnsupportedOperationException}. Being a sorted map, its {@code get} and
   * {@code containsKey} throw for a null key or one that is not an {@link InstanceKey}; {@link #get} and
   * {@link #contains} do not.
   */
  public Map<InstanceKey, Instance> asMap() {
    return byKey;
  }

  /** Same instances (revision aside)? O(1) when both share one map, else O(n log n). */
  public boolean sameInstances(EndpointSet other) {
    return byKey.equals(other.byKey);
  }

  /**
   * This set with {@code instance} added, or replacing the instance with its key; same revision. O(log n): the
   * new set shares every other node with this one, which does not change.
   */
  public EndpointSet plus(Instance instance) {
    return new EndpointSet(revision, byKey.plus(instance.key(), instance));
  }

  /** This set without the instance keyed {@code key} (this set itself if there is none); same revision. O(log n). */
  public EndpointSet minus(InstanceKey key) {
    TreePMap<InstanceKey, Instance> next = byKey.minus(key);
    return next == byKey ? this : new EndpointSet(revision, next);
  }

  /** The same instances at {@code revision}. O(1). */
  public EndpointSet atRevision(long revision) {
    return revision == this.revision ? this : new EndpointSet(revision, byKey);
  }

  /** The persistent map itself, for {@link EndpointDelta}'s merged walk. */
  TreePMap<InstanceKey, Instance> tree() {
    return byKey;
  }

  @Override
  public String toString() {
    return "EndpointSet[revision " + revision + ", " + byKey.size() + " instance(s)]";
  }
}
