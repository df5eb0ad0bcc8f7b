package dev.muster.cache.internal;

import dev.muster.cache.EndpointSet;
import java.util.Optional;

/**
 * Keeps the last published set somewhere that survives a restart, so a consumer that starts while etcd is down
 * can serve its last known endpoints (as stale) instead of none.
 */
public interface SnapshotStore {
  /** No store: nothing is saved or loaded. */
  SnapshotStore NONE = new SnapshotStore() {
    @Override
    public Optional<EndpointSet> load() {
      return Optional.empty();
    }

    @Override
    public void save(EndpointSet set) {}
  };

  /** The saved set, or empty when there is none (or it cannot be read: that is logged, not thrown). */
  Optional<EndpointSet> load();

  /** Saves {@code set} atomically: a reader sees the old file or the new one, never a mix. */
  void save(EndpointSet set);
}
