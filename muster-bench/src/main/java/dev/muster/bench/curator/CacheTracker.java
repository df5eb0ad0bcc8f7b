package dev.muster.bench.curator;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLongArray;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.ServiceCacheListener;

/**
 * When each of {@code n} consumer caches first listed, and then first stopped listing, each tracked instance id, as
 * {@link System#nanoTime()} read inside Curator's {@code cacheChanged()} callback: the moment a caller reading that
 * cache could first see the change.
 *
 * <p>Thread-safe. Curator calls a cache's listeners on its client's single "safe" thread, so each cache's slot in
 * the arrays is written by one thread; the measuring thread only reads. Ids must be {@link #track tracked} before
 * they are registered. A slot holding 0 means "not yet" (a real nanoTime of exactly 0 is recorded as 1).
 */
final class CacheTracker {
  private final int caches;
  private final Map<String, AtomicLongArray> seenAt = new ConcurrentHashMap<>();
  private final Map<String, AtomicLongArray> goneAt = new ConcurrentHashMap<>();

  CacheTracker(int caches) {
    this.caches = caches;
  }

  void track(String id) {
    seenAt.put(id, new AtomicLongArray(caches));
    goneAt.put(id, new AtomicLongArray(caches));
  }

  /** Stops tracking {@code id}, so that long runs do not scan ids that are done with. */
  void forget(String id) {
    seenAt.remove(id);
    goneAt.remove(id);
  }

  /** A listener for the cache at {@code index}; add it before the change it should observe. */
  ServiceCacheListener listener(int index, ServiceCache<String> cache) {
    return new ServiceCacheListener() {
      @Override
      public void cacheChanged() {
        long now = System.nanoTime();
        changed(index, cache.getInstances(), now == 0 ? 1 : now);
      }

      @Override
      public void stateChanged(CuratorFramework client, ConnectionState newState) {
        // Connection states do not change the instance list this tracker records.
      }
    };
  }

  private void changed(int index, Iterable<ServiceInstance<String>> instances, long now) {
    Set<String> listed = new HashSet<>();
    for (ServiceInstance<String> instance : instances) {
      listed.add(instance.getId());
    }
    for (Map.Entry<String, AtomicLongArray> e : seenAt.entrySet()) {
      AtomicLongArray seen = e.getValue();
      if (listed.contains(e.getKey())) {
        seen.compareAndSet(index, 0, now);
      } else if (seen.get(index) != 0) {
        AtomicLongArray gone = goneAt.get(e.getKey());
        if (gone != null) {
          gone.compareAndSet(index, 0, now);
        }
      }
    }
  }

  boolean visibleEverywhere(String id) {
    return allSet(seenAt.get(id));
  }

  boolean goneEverywhere(String id) {
    return allSet(goneAt.get(id));
  }

  /** When the last cache listed {@code id}; only meaningful once {@link #visibleEverywhere}. */
  long lastSeenAt(String id) {
    return max(seenAt.get(id));
  }

  /** When the last cache dropped {@code id}; only meaningful once {@link #goneEverywhere}. */
  long lastGoneAt(String id) {
    return max(goneAt.get(id));
  }

  private static boolean allSet(AtomicLongArray a) {
    if (a == null) {
      return false;
    }
    for (int i = 0; i < a.length(); i++) {
      if (a.get(i) == 0) {
        return false;
      }
    }
    return true;
  }

  /** The latest of the times: nanoTime values are compared by difference, since they may wrap. */
  private static long max(AtomicLongArray a) {
    long latest = a.get(0);
    for (int i = 1; i < a.length(); i++) {
      if (a.get(i) - latest > 0) {
        latest = a.get(i);
      }
    }
    return latest;
  }
}
