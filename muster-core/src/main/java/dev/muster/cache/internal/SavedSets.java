package dev.muster.cache.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.internal.Json;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The disk snapshot's side of a cache (docs/design-security2.md, item 5): what a published set is saved as, and
 * what a saved set is worth when loaded. A loaded record is judged as one of etcd's would be: a key outside the
 * cache's prefix is dropped (a file written by another cache, or edited), a value that does not decode is dropped,
 * and with trusted keys a value that does not verify is dropped (expiry is not enforced: the set is served only while
 * etcd is unreachable, as stale). Records are dropped one by one, counted in the log line; the rest load.
 */
final class SavedSets {
  private static final Logger log = LoggerFactory.getLogger(SavedSets.class);

  private SavedSets() {}

  /**
   * {@code set} (published by the cache of {@code applier}) as records to save: each as etcd held it when the
   * applier accepted a signed value for its key, else its value encoded again (unsigned: a cache without trusted
   * keys decoded it from such a value; one with trusted keys drops it at load).
   */
  static List<CacheRecord> records(RevisionApplier applier, EndpointSet set) {
    List<CacheRecord> out = new ArrayList<>(set.size());
    for (Instance i : set.instances()) {
      String key = applier.layout().instanceKey(i);
      CacheRecord held = applier.signed().heldRecord(key);
      out.add(held != null ? held
          : CacheRecord.put(key, InstanceCodec.encode(i), Math.max(1, set.modRevision(i.key())), 0));
    }
    return out;
  }

  /** The set {@code stored} holds for the cache of {@code applier}, checked (see the class comment). */
  static EndpointSet check(RevisionApplier applier, SnapshotStore.Stored stored) {
    List<CacheRecord> ours = new ArrayList<>(stored.records().size());
    int foreign = 0;
    for (CacheRecord r : stored.records()) {
      if (r.key().startsWith(applier.prefix()) && r.modRevision() <= stored.revision()) {
        ours.add(r);
      } else {
        foreign++;
        if (foreign == 1) {
          log.warn("the endpoint snapshot holds {} (revision {}), which is not this cache's ({}, at {}): dropped",
              Json.show(r.key()), r.modRevision(), applier.prefix(), stored.revision());
        }
      }
    }
    RevisionApplier check = new RevisionApplier(applier.layout(), applier.prefix(), applier.signed().trust(),
        applier.signed().clock());
    EndpointSet set = check.replace(stored.revision(), ours, EndpointDelta.Kind.SNAPSHOT).set();
    int dropped = foreign + (ours.size() - set.size());
    if (dropped > 0) {
      log.warn("the endpoint snapshot's records: {} loaded, {} dropped ({} not this cache's, {} malformed, {} not"
          + " verified)", set.size(), dropped, foreign, check.malformedCount(), check.unverifiedCount());
    }
    return set;
  }
}
