package dev.muster.chaos;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records what one cache publishes and checks, as it arrives, what needs no etcd: the listener contract (one
 * SNAPSHOT first, never another), revisions that strictly increase, and deltas that rebuild each published set.
 * Each publication is also handed to {@code onPublished} at once (the {@link PublicationChecker} compares it with
 * etcd at its revision before a compaction can take that revision away).
 *
 * <p>Thread-safe: the cache calls it on its notifier; the schedule's thread reads it.
 */
final class PublicationLog implements EndpointListener {
  /** One publication: the set at {@code revision}. */
  record Publication(long revision, EndpointDelta.Kind kind, EndpointSet set) {}

  private final String cache;
  private final java.util.function.Consumer<Publication> onPublished;
  private final Map<InstanceKey, Instance> rebuilt = new HashMap<>(); // notifier only
  private final List<String> breaches = new ArrayList<>();
  private long lastRevision = -1;
  private long calls;

  PublicationLog(String cache, java.util.function.Consumer<Publication> onPublished) {
    this.cache = cache;
    this.onPublished = onPublished;
  }

  @Override
  public synchronized void onChange(EndpointSet set, EndpointDelta delta) {
    calls++;
    if (calls == 1 && delta.kind() != EndpointDelta.Kind.SNAPSHOT) {
      breaches.add(cache + ": the first publication is " + delta.kind() + " at " + set.revision() + ", not SNAPSHOT");
    } else if (calls > 1 && delta.kind() == EndpointDelta.Kind.SNAPSHOT) {
      breaches.add(cache + ": a second SNAPSHOT at " + set.revision());
    }
    if (set.revision() <= lastRevision) {
      breaches.add(cache + ": published revision " + set.revision() + " after " + lastRevision
          + " (revisions must strictly increase)");
    }
    lastRevision = set.revision();
    if (delta.kind() == EndpointDelta.Kind.SNAPSHOT) {
      rebuilt.clear(); // a SNAPSHOT's delta is from the empty set; UPDATE's and RESYNC's from the last one published
    }
    delta.removed().forEach(i -> rebuilt.remove(i.key()));
    delta.added().forEach(i -> rebuilt.put(i.key(), i));
    delta.changed().forEach(i -> rebuilt.put(i.key(), i));
    if (!rebuilt.equals(set.asMap())) {
      breaches.add(cache + ": the deltas up to revision " + set.revision() + " do not rebuild the set published");
      rebuilt.clear();
      rebuilt.putAll(set.asMap());
    }
    onPublished.accept(new Publication(set.revision(), delta.kind(), set));
  }

  synchronized List<String> breaches() {
    return List.copyOf(breaches);
  }

  synchronized long publications() {
    return calls;
  }

  /** The revision of the last publication (-1 before the first). */
  synchronized long lastRevision() {
    return lastRevision;
  }
}
