package dev.muster.cache;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

  /** The difference between two sets, by key and value. O(size of both). */
  public static EndpointDelta between(Kind kind, EndpointSet before, EndpointSet after) {
    List<Instance> added = new ArrayList<>();
    List<Instance> removed = new ArrayList<>();
    List<Instance> changed = new ArrayList<>();
    Map<InstanceKey, Instance> old = before.asMap();
    for (Map.Entry<InstanceKey, Instance> e : after.asMap().entrySet()) {
      Instance previous = old.get(e.getKey());
      if (previous == null) {
        added.add(e.getValue());
      } else if (!previous.equals(e.getValue())) {
        changed.add(e.getValue());
      }
    }
    for (Map.Entry<InstanceKey, Instance> e : old.entrySet()) {
      if (!after.asMap().containsKey(e.getKey())) {
        removed.add(e.getValue());
      }
    }
    return new EndpointDelta(kind, added, removed, changed);
  }
}
