package dev.muster.cache.internal;

import java.util.List;
import java.util.Optional;

/**
 * Keeps the last published set somewhere that survives a restart, so a consumer that starts while etcd is down
 * can serve its last known endpoints (as stale) instead of none. It keeps the records as etcd held them (key, lease,
 * value with its signature), so that a cache with trusted keys checks them again when it loads them, as it checks
 * etcd's (docs/design-security2.md, item 5).
 */
public interface SnapshotStore {
  /** A set as stored: its revision and its records. */
  record Stored(long revision, List<CacheRecord> records) {
    public Stored {
      records = List.copyOf(records);
    }
  }

  /** No store: nothing is saved or loaded. */
  SnapshotStore NONE = new SnapshotStore() {
    @Override
    public Optional<Stored> load() {
      return Optional.empty();
    }

    @Override
    public void save(Stored set) {}
  };

  /** The saved set, or empty when there is none (or it cannot be read: that is logged, not thrown). */
  Optional<Stored> load();

  /** Saves {@code set} atomically: a reader sees the old file or the new one, never a mix. */
  void save(Stored set);
}
