package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * An immutable endpoint set: the instances of one service as of one etcd revision. Published sets are swapped
 * atomically, so a reader holding one sees a consistent view without locking.
 *
 * <p>Immutable and thread-safe. {@link #instances()} and {@link #asMap()} are built once, on first use (two
 * threads asking at once may both build them; they build equal ones).
 *
 * <p>Representation: a persistent (structurally shared) search tree of instances, {@link InstanceTree}, ordered
 * by the key's path ({@link KeyPathOrder}). {@code plus} and {@code minus} return a new tree that shares every
 * node with the old one except the O(log n) on the path to the changed key, and no node is ever modified. So the
 * cache builds the next set (with {@link #plus}, {@link #minus}) in O(changed × log n) instead of copying the
 * whole map, and the set it replaced stays exactly as it was: a reader still holding it sees nothing of the
 * change. A node holds only its instance (no separate key), 32 B per instance.
 *
 * <p>Why a tree rather than a hash trie (O(log32 n) lookups): the order gives {@link #instances()} without a sort
 * (one O(n) in-order walk, once per set, for whoever asks — balancers, the snapshot store) and lets
 * {@link EndpointDelta#between} diff two sets in one merged walk. A lookup costs about log2(n) key comparisons
 * (14 at 10,000 instances), which {@link KeyPathOrder} makes without allocating.
 */
public final class EndpointSet {
  /** The set before the first snapshot: revision 0, no instances. */
  public static final EndpointSet EMPTY = new EndpointSet(0, null);

  private final long revision;
  private final InstanceTree.Node tree; // null when empty
  private volatile List<Instance> sorted;
  private Map<InstanceKey, Instance> map; // a view; racy but safe: it holds only final fields

  private EndpointSet(long revision, InstanceTree.Node tree) {
    this.revision = revision;
    this.tree = tree;
  }

  /**
   * A set holding {@code instances} at {@code revision}; of two instances with the same key, the later one wins.
   * O(n) when they come sorted by key path, O(n log n) otherwise.
   */
  public static EndpointSet of(long revision, List<Instance> instances) {
    return new EndpointSet(revision, InstanceTree.of(instances));
  }

  /**
   * As {@link #of(long, List)}, with each instance's mod revision (the etcd revision that last wrote its record) at
   * the same index of {@code modRevisions}.
   */
  public static EndpointSet of(long revision, List<Instance> instances, long[] modRevisions) {
    if (modRevisions.length != instances.size()) {
      throw new IllegalArgumentException(modRevisions.length + " mod revisions for " + instances.size()
          + " instances: give one per instance");
    }
    return new EndpointSet(revision, InstanceTree.of(instances, modRevisions));
  }

  /** The etcd revision this set reflects (0 before the first snapshot). */
  public long revision() {
    return revision;
  }

  /** The instances, sorted by key path ({@code namespace/service/version/id}). Immutable. */
  public List<Instance> instances() {
    List<Instance> s = sorted;
    if (s == null) {
      Instance[] all = new Instance[size()];
      Iterator<Instance> it = InstanceTree.iterator(tree);
      for (int i = 0; i < all.length; i++) {
        all[i] = it.next();
      }
      s = List.of(all); // the tree iterates in key order already
      sorted = s;
    }
    return s;
  }

  public Optional<Instance> get(InstanceKey key) {
    return key == null ? Optional.empty() : Optional.ofNullable(InstanceTree.get(tree, key));
  }

  /**
   * The etcd revision that last wrote the record of the instance keyed {@code key} (its {@code mod_revision}): 0 when
   * the set does not know it (an instance added without one), -1 when the set holds no such instance. A cache's
   * sets know it for every instance; the cache's audit compares it with etcd's.
   */
  public long modRevision(InstanceKey key) {
    InstanceTree.Node n = key == null ? null : InstanceTree.node(tree, key);
    return n == null ? -1 : n.modRevision;
  }

  public boolean contains(InstanceKey key) {
    return key != null && InstanceTree.get(tree, key) != null;
  }

  public int size() {
    return InstanceTree.size(tree);
  }

  public boolean isEmpty() {
    return tree == null;
  }

  /**
   * The instances keyed by their registry key, iterated in key-path order: a read-only view of this set, not a
   * copy. Every mutator ({@code put}, {@code remove}, {@code clear}, and those of its views and entries) throws
   * {@link UnsupportedOperationException}. {@code get} and {@code containsKey} answer null and false for a null
   * key or one that is not an {@link InstanceKey}. It equals (and hashes as) any map with the same entries.
   */
  public Map<InstanceKey, Instance> asMap() {
    Map<InstanceKey, Instance> m = map;
    if (m == null) {
      m = new MapView(tree);
      map = m;
    }
    return m;
  }

  /** Same instances (revision aside)? O(1) when both share one tree, else O(n). */
  public boolean sameInstances(EndpointSet other) {
    return InstanceTree.sameInstances(tree, other.tree);
  }

  /**
   * This set with {@code instance} added, or replacing the instance with its key; same revision. O(log n): the
   * new set shares every other node with this one, which does not change.
   */
  public EndpointSet plus(Instance instance) {
    return new EndpointSet(revision, InstanceTree.plus(tree, instance));
  }

  /** As {@link #plus(Instance)}, recording the etcd revision that wrote the instance's record ({@link #modRevision}). */
  public EndpointSet plus(Instance instance, long modRevision) {
    InstanceTree.Node next = InstanceTree.plus(tree, instance, modRevision);
    return next == tree ? this : new EndpointSet(revision, next);
  }

  /** This set without the instance keyed {@code key} (this set itself if there is none); same revision. O(log n). */
  public EndpointSet minus(InstanceKey key) {
    InstanceTree.Node next = InstanceTree.minus(tree, key);
    return next == tree ? this : new EndpointSet(revision, next);
  }

  /** The same instances at {@code revision}. O(1). */
  public EndpointSet atRevision(long revision) {
    return revision == this.revision ? this : new EndpointSet(revision, tree);
  }

  /** The tree itself, for {@link EndpointDelta}'s merged walk and for tests; null when empty. */
  InstanceTree.Node tree() {
    return tree;
  }

  @Override
  public String toString() {
    return "EndpointSet[revision " + revision + ", " + size() + " instance(s)]";
  }

  /** {@link #asMap()}: lookups go to the tree; entries are made as the walk meets them. */
  private static final class MapView extends AbstractMap<InstanceKey, Instance> {
    private final InstanceTree.Node tree;

    MapView(InstanceTree.Node tree) {
      this.tree = tree;
    }

    @Override
    public Set<Map.Entry<InstanceKey, Instance>> entrySet() {
      return new AbstractSet<>() {
        @Override
        public Iterator<Map.Entry<InstanceKey, Instance>> iterator() {
          Iterator<Instance> walk = InstanceTree.iterator(tree);
          return new Iterator<>() {
            @Override
            public boolean hasNext() {
              return walk.hasNext();
            }

            @Override
            public Map.Entry<InstanceKey, Instance> next() {
              Instance i = walk.next();
              return new AbstractMap.SimpleImmutableEntry<>(i.key(), i);
            }
          };
        }

        @Override
        public int size() {
          return InstanceTree.size(tree);
        }

        @Override
        public void clear() {
          throw readOnly();
        }
      };
    }

    @Override
    public int size() {
      return InstanceTree.size(tree);
    }

    @Override
    public Instance get(Object key) {
      return key instanceof InstanceKey k ? InstanceTree.get(tree, k) : null;
    }

    @Override
    public boolean containsKey(Object key) {
      return get(key) != null;
    }

    @Override
    public Instance remove(Object key) {
      throw readOnly();
    }

    @Override
    public void clear() {
      throw readOnly();
    }

    private static UnsupportedOperationException readOnly() {
      return new UnsupportedOperationException("an endpoint set is immutable: build another with plus or minus");
    }
  }
}
