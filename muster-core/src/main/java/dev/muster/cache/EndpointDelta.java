package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;

/**
 * What changed between two published sets: instances added, removed, and changed (same key, new value).
 *
 * @param kind why it was published: the first snapshot, an applied revision, or a full resync that replaced the set
 */
public record EndpointDelta(Kind kind, List<Instance> added, List<Instance> removed, List<Instance> changed) {
  /** Why a set was published. */
  public enum Kind {
    /** The first set (from etcd, or from the disk snapshot while etcd is unreachable). */
    SNAPSHOT,
    /** One revision's events applied. */
    UPDATE,
    /** The set was replaced by a fresh range (after compaction or any doubt). */
    RESYNC
  }

  public EndpointDelta {
    added = List.copyOf(added);
    removed = List.copyOf(removed);
    changed = List.copyOf(changed);
  }

  public boolean isEmpty() {
    return added.isEmpty() && removed.isEmpty() && changed.isEmpty();
  }

  /**
   * The difference between two sets, by key and value; each list is in key-path order. O(size of both): both
   * sets are ordered by {@link KeyPathOrder}, so one merged walk over the two pairs up equal keys, and a key met
   * on one side only was added or removed. Used where whole sets are compared (snapshots, resyncs, the
   * mass-removal guard while it holds); an applied revision's delta comes from its touched keys instead
   * (the cache applying one revision).
   */
  public static EndpointDelta between(Kind kind, EndpointSet before, EndpointSet after) {
    List<Instance> added = new ArrayList<>();
    List<Instance> removed = new ArrayList<>();
    List<Instance> changed = new ArrayList<>();
    if (before.tree() != after.tree()) {
      Iterator<Instance> olds = InstanceTree.iterator(before.tree());
      Iterator<Instance> nows = InstanceTree.iterator(after.tree());
      Instance old = next(olds);
      Instance now = next(nows);
      while (old != null || now != null) {
        int c = old == null ? 1 : now == null ? -1 : KeyPathOrder.compare(old, now);
        if (c < 0) {
          removed.add(old);
          old = next(olds);
        } else if (c > 0) {
          added.add(now);
          now = next(nows);
        } else {
          if (!old.equals(now)) {
            changed.add(now);
          }
          old = next(olds);
          now = next(nows);
        }
      }
    }
    return new EndpointDelta(kind, added, removed, changed);
  }

  /**
   * The difference between two sets at {@code keys} only, which must hold every key whose instance may differ
   * between them (in any order, duplicates allowed); each list is in key-path order. O(keys × log size): used to
   * merge the deltas of several publications into one without walking the whole set.
   */
  public static EndpointDelta between(Kind kind, EndpointSet before, EndpointSet after,
      Collection<InstanceKey> keys) {
    List<InstanceKey> sorted = new ArrayList<>(new HashSet<>(keys));
    sorted.sort(KeyPathOrder.INSTANCE);
    List<Instance> added = new ArrayList<>();
    List<Instance> removed = new ArrayList<>();
    List<Instance> changed = new ArrayList<>();
    for (InstanceKey key : sorted) {
      Instance was = before.get(key).orElse(null);
      Instance now = after.get(key).orElse(null);
      if (was == null && now != null) {
        added.add(now);
      } else if (was != null && now == null) {
        removed.add(was);
      } else if (was != null && !was.equals(now)) {
        changed.add(now);
      }
    }
    return new EndpointDelta(kind, added, removed, changed);
  }

  private static <T> T next(Iterator<T> it) {
    return it.hasNext() ? it.next() : null;
  }
}
