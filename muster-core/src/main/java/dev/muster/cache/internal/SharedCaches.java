package dev.muster.cache.internal;

import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * One registry's directory of shared endpoint caches: a config's cache is opened once however many holders ask for
 * it, and closed when the last of them lets go. A holder gets a {@link Hold}, an {@link EndpointCache} whose reads
 * are the shared cache's and whose listeners are its own: closing the hold removes them and releases the cache.
 *
 * <p>Two openers share a cache only if their {@link CacheConfig}s are equal (every field; a listener executor by
 * identity): a cache is what it holds (namespace, service, version, trusted keys, mass-removal guard, snapshot file)
 * and how it keeps up (its tuning), and two different ones cannot be one cache. The adapters open every service
 * with the defaults plus the user's trusted keys, so they share.
 *
 * <p>Thread-safe. The lock guards the map and the hold counts only: a cache is started under it (starting does no
 * I/O: the first range runs on the cache's own loop) and closed outside it (closing waits for the cache's loop).
 * Listeners are added and removed outside it too.
 */
public final class SharedCaches {
  private final Function<CacheConfig, EndpointCache> opener;
  private final Object lock = new Object();
  private final Map<CacheConfig, Shared> open = new HashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  /** {@code opener} starts a cache of its own for a config (the registry's {@code watch}). */
  public SharedCaches(Function<CacheConfig, EndpointCache> opener) {
    this.opener = Objects.requireNonNull(opener, "opener");
  }

  /** One shared cache and how many holds it has; {@code holds} is guarded by the directory's lock. */
  private static final class Shared {
    final CacheConfig config;
    final EndpointCache cache;
    int holds;

    Shared(CacheConfig config, EndpointCache cache) {
      this.config = config;
      this.cache = cache;
    }
  }

  /**
   * A hold on the shared cache of {@code config}, with {@code listeners} added to it (each receives the current set
   * first, then every change). Throws {@link IllegalStateException} once the directory is closed.
   */
  public EndpointCache open(CacheConfig config, List<EndpointListener> listeners) {
    Objects.requireNonNull(config, "config");
    Hold hold;
    synchronized (lock) {
      if (closed) {
        throw new IllegalStateException("the registry is closed: open caches before closing it");
      }
      Shared shared = open.get(config);
      if (shared == null) {
        shared = new Shared(config, Objects.requireNonNull(opener.apply(config), "the opener returned null"));
        open.put(config, shared);
      }
      shared.holds++;
      hold = new Hold(shared);
    }
    try {
      listeners.forEach(hold::addListener);
    } catch (RuntimeException e) {
      hold.close();
      throw e;
    }
    return hold;
  }

  /** How many shared caches are open. */
  public int size() {
    synchronized (lock) {
      return open.size();
    }
  }

  /** How many holds the shared cache of {@code config} has (0: not open). */
  public int holds(CacheConfig config) {
    synchronized (lock) {
      Shared shared = open.get(config);
      return shared == null ? 0 : shared.holds;
    }
  }

  /**
   * Refuses new holds from now on. The caches themselves are the registry's to close (it closes every cache it
   * started); holds closed afterwards only remove their listeners.
   */
  public void close() {
    synchronized (lock) {
      closed = true;
      open.clear();
    }
  }

  private void release(Shared shared) {
    boolean last;
    synchronized (lock) {
      last = --shared.holds == 0 && open.get(shared.config) == shared;
      if (last) {
        open.remove(shared.config);
      }
    }
    if (last) {
      shared.cache.close(); // outside the lock: closing waits for the cache's loop
    }
  }

  /**
   * A holder's view of a shared cache: reads are the cache's; listeners are this holder's and leave with it.
   * Thread-safe.
   */
  private final class Hold implements EndpointCache {
    private final Shared shared;
    private final List<Muted> mine = new CopyOnWriteArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    Hold(Shared shared) {
      this.shared = shared;
    }

    @Override
    public EndpointSet current() {
      return shared.cache.current();
    }

    @Override
    public long revision() {
      return shared.cache.revision();
    }

    @Override
    public Optional<CacheConfig> config() {
      return Optional.of(shared.config);
    }

    @Override
    public boolean isStale() {
      return shared.cache.isStale();
    }

    @Override
    public Optional<Instant> staleSince() {
      return shared.cache.staleSince();
    }

    @Override
    public Duration lastEventAge() {
      return shared.cache.lastEventAge();
    }

    @Override
    public long resyncCount() {
      return shared.cache.resyncCount();
    }

    @Override
    public long auditCount() {
      return shared.cache.auditCount();
    }

    @Override
    public long auditDifferenceCount() {
      return shared.cache.auditDifferenceCount();
    }

    @Override
    public long malformedCount() {
      return shared.cache.malformedCount();
    }

    @Override
    public long changeCount() {
      return shared.cache.changeCount();
    }

    @Override
    public long snapshotLoadCount() {
      return shared.cache.snapshotLoadCount();
    }

    @Override
    public int listenerBacklog() {
      return shared.cache.listenerBacklog();
    }

    @Override
    public long unverifiedCount() {
      return shared.cache.unverifiedCount();
    }

    @Override
    public Optional<MusterException> failure() {
      return shared.cache.failure();
    }

    @Override
    public boolean awaitReady(Duration timeout) {
      return shared.cache.awaitReady(timeout);
    }

    @Override
    public void addListener(EndpointListener listener) {
      if (closed.get()) {
        throw new IllegalStateException("this hold on the cache of " + shared.config.service() + " is closed: add"
            + " listeners before closing it");
      }
      Muted muted = new Muted(Objects.requireNonNull(listener, "listener"));
      mine.add(muted);
      shared.cache.addListener(muted);
    }

    @Override
    public void removeListener(EndpointListener listener) {
      for (Muted m : mine) {
        if (m.listener == listener && mine.remove(m)) {
          m.mute();
          shared.cache.removeListener(m);
        }
      }
    }

    /** Releases the hold: this holder's listeners are muted and removed; the last hold closes the cache. */
    @Override
    public void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      for (Muted m : mine) {
        m.mute(); // a delivery queued before the removal is dropped
        shared.cache.removeListener(m);
      }
      mine.clear();
      release(shared);
    }

    @Override
    public String toString() {
      return "SharedCache[" + shared.config.namespace() + "/" + shared.config.service() + ", " + shared.cache + "]";
    }
  }

  /** A holder's listener that stops hearing once muted. */
  private static final class Muted implements EndpointListener {
    final EndpointListener listener;
    private volatile boolean muted;

    Muted(EndpointListener listener) {
      this.listener = listener;
    }

    void mute() {
      muted = true;
    }

    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      if (!muted) {
        listener.onChange(set, delta);
      }
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      if (!muted) {
        listener.onStale(set, since, reason);
      }
    }

    @Override
    public void onRecovered(EndpointSet set, Duration staleFor) {
      if (!muted) {
        listener.onRecovered(set, staleFor);
      }
    }

    @Override
    public void onFailed(EndpointSet set, MusterException why) {
      if (!muted) {
        listener.onFailed(set, why);
      }
    }
  }
}
