package dev.muster.balance;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierState;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * A {@link Balancer}'s endpoints: one {@link EndpointState} per key (its load, latency and ejection survive set
 * updates), and the states and their outlier states in the set's key order, the arrays a picker is built from. A
 * set update comes with its delta, so only the delta's keys are looked at; only a change of members re-lays the
 * arrays.
 *
 * <p>Not thread-safe: guarded by the balancer's lock, never seen by a pick.
 */
final class EndpointTable {
  private final Duration ewmaDecay;
  private final LongSupplier nanoTime;
  private Map<InstanceKey, EndpointState> byKey = new HashMap<>();
  private EndpointState[] ordered = new EndpointState[0];
  private List<OutlierState> outliers = List.of();

  EndpointTable(Duration ewmaDecay, LongSupplier nanoTime) {
    this.ewmaDecay = ewmaDecay;
    this.nanoTime = nanoTime;
  }

  int size() {
    return byKey.size();
  }

  EndpointState get(InstanceKey key) {
    return byKey.get(key);
  }

  /** The states in the set's key order (the array itself: do not change it). */
  EndpointState[] ordered() {
    return ordered;
  }

  List<OutlierState> outliers() {
    return outliers;
  }

  /**
   * Applies the delta. Returns null (and changes nothing) when it does not fit the endpoints held (a key to change
   * or remove that is not here, a key to add that is, a final count other than {@code set.size()}); otherwise
   * whether a picker must be rebuilt: not when only fields it never reads changed (metadata, tags). The instances
   * removed are added to {@code removed}.
   */
  Boolean apply(EndpointSet set, EndpointDelta delta, List<Instance> removed) {
    for (Instance i : delta.removed()) {
      if (!byKey.containsKey(i.key())) {
        return null;
      }
    }
    for (Instance i : delta.changed()) {
      if (!byKey.containsKey(i.key())) {
        return null;
      }
    }
    for (Instance i : delta.added()) {
      if (byKey.containsKey(i.key())) {
        return null;
      }
    }
    if (byKey.size() - delta.removed().size() + delta.added().size() != set.size()) {
      return null;
    }
    boolean pickerStale = false;
    for (Instance i : delta.changed()) {
      EndpointState state = byKey.get(i.key());
      pickerStale |= !samePickFields(state.instance(), i);
      state.instance(i);
    }
    if (delta.added().isEmpty() && delta.removed().isEmpty()) {
      return pickerStale; // same members, same order: the arrays stay
    }
    for (Instance i : delta.removed()) {
      removed.add(byKey.remove(i.key()).instance());
    }
    for (Instance i : delta.added()) {
      byKey.put(i.key(), new EndpointState(i, ewmaDecay, nanoTime));
    }
    order(set);
    return true;
  }

  /** Holds exactly {@code set}, comparing every key; the instances dropped are added to {@code removed}. */
  void replace(EndpointSet set, List<Instance> removed) {
    Map<InstanceKey, EndpointState> next = new HashMap<>();
    for (Instance instance : set.instances()) {
      EndpointState state = byKey.get(instance.key());
      if (state == null) {
        state = new EndpointState(instance, ewmaDecay, nanoTime);
      } else {
        state.instance(instance);
      }
      next.put(state.key(), state);
    }
    for (Map.Entry<InstanceKey, EndpointState> old : byKey.entrySet()) {
      if (!next.containsKey(old.getKey())) {
        removed.add(old.getValue().instance());
      }
    }
    byKey = next;
    order(set);
  }

  /** The fields a picker is built from (Picker reads weight, zone and DRAINING) are the same in both. */
  private static boolean samePickFields(Instance a, Instance b) {
    return a.weight() == b.weight() && a.state() == b.state() && Objects.equals(a.zone(), b.zone());
  }

  /** The arrays in the set's key order, from {@code byKey} (which holds exactly the set's keys). */
  private void order(EndpointSet set) {
    List<Instance> instances = set.instances();
    EndpointState[] nextOrdered = new EndpointState[instances.size()];
    OutlierState[] nextOutliers = new OutlierState[instances.size()];
    for (int i = 0; i < nextOrdered.length; i++) {
      EndpointState state = byKey.get(instances.get(i).key());
      nextOrdered[i] = state;
      nextOutliers[i] = state.outlier();
    }
    ordered = nextOrdered;
    outliers = List.of(nextOutliers);
  }
}
