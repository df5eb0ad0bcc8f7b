package dev.muster.etcd.internal;

import dev.muster.registry.Instance;
import dev.muster.registry.internal.RegistrarDriver;
import dev.muster.registry.internal.RegistrarDriver.Failure;
import dev.muster.registry.internal.RegistrarDriver.IoException;
import dev.muster.registry.internal.RegistrarDriver.Lease;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases a registry shares among its registrations with {@code RegistrarConfig.sharedLease} (one per TTL), as a
 * ZooKeeper session is shared by its client's ephemeral nodes. Each such registration's driver talks to its own
 * {@link Io}, which maps the driver's per-lease calls onto the shared lease; the driver itself does not change.
 *
 * <p>The life of a shared lease:
 * <pre>
 * (none) --a registration asks (grant, single-flight: the others wait for it)--> LIVE, users 1
 * LIVE --another registration asks--> users + 1
 * LIVE --a put fails "lease not found", or a keepalive answers TTL 0--> LOST: the next ask grants a new one
 * LIVE --its last user closes (or gives the lease back after a refused duplicate)--> revoked, (none)
 * </pre>
 * Keepalives are coalesced: a registration's keepalive is answered from the shared lease's last answer when that is
 * younger than half the registration's keepalive interval, else it makes the round trip (one at a time; others
 * asking meanwhile wait for its answer). So the registry renews each shared lease about twice per interval however
 * many registrations use it.
 *
 * <p>What a registration owns on a shared lease is its key, not the lease: {@code close()} deletes the key only if
 * its mod revision is still this registration's last write, and gives the lease back. A delete that fails is kept
 * and tried again after the next answered keepalive, or done by the revoke when the last user leaves. The same key
 * registered twice on one registry: the second registration is handed a lease of its own, so that its put finds
 * the key held by another lease and is refused as a duplicate, as without sharing.
 *
 * <p>Thread-safe: the state is guarded by {@code this}; etcd calls are made outside the lock, on the calling
 * registration's loop, and a waiter waits at most for the caller it waits on (whose calls have the request timeout).
 */
public final class SharedLeases {
  private static final Logger log = LoggerFactory.getLogger(SharedLeases.class);

  private final LongSupplier nanoTime;
  private final Map<Long, Shared> byTtl = new HashMap<>();
  private final Map<Long, Shared> byId = new HashMap<>();
  private final Map<Long, CompletableFuture<Shared>> granting = new HashMap<>();
  /** Keys claimed by a live registration on a shared lease: the same key twice is a duplicate. */
  private final Set<String> claimed = new HashSet<>();
  /** Deletes of closed registrations' keys that failed, by key: their mod revision (tried again later). */
  private final Map<String, Long> pendingDeletes = new LinkedHashMap<>();
  private long grants;
  private long roundTrips;
  private long coalesced;

  private static final class Shared {
    final long id;
    final long ttlSeconds;
    int users;
    boolean lost;
    /** When the grant was asked for or the last answered keepalive was sent: the lease's age counts from there. */
    long refreshedAtNanos;
    long lastTtl;
    CompletableFuture<Long> keepalive;

    Shared(long id, long ttlSeconds, long refreshedAtNanos) {
      this.id = id;
      this.ttlSeconds = ttlSeconds;
      this.refreshedAtNanos = refreshedAtNanos;
      this.lastTtl = ttlSeconds;
    }
  }

  public SharedLeases(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
  }

  /** Counters for {@code EtcdRegistry.connectionStats()}: grants, keepalive round trips, keepalives answered. */
  public synchronized Map<String, Long> stats() {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("shared_lease.grants", grants);
    m.put("shared_lease.keepalive_round_trips", roundTrips);
    m.put("shared_lease.keepalives_coalesced", coalesced);
    m.put("shared_lease.live", (long) byTtl.size());
    return m;
  }

  /** The operations on a registration's own key that sharing needs beyond {@link RegistrarDriver.Io}. */
  public interface KeyOps {
    /** Deletes the key if its mod revision is {@code modRevision}; returns the revision after. */
    long deleteIf(String key, long modRevision);

    /** The key's mod revision, empty when it does not exist. */
    OptionalLong modRevision(String key);
  }

  /** The driver-facing Io of one registration on a shared lease; {@code delegate} makes the etcd calls. */
  public RegistrarDriver.Io io(String key, Duration keepaliveInterval, RegistrarDriver.Io delegate, KeyOps keys) {
    return new Io(key, keepaliveInterval, delegate, keys);
  }

  private Lease acquire(Duration ttl, Supplier<Lease> grant) {
    long seconds = ttl.toSeconds();
    while (true) {
      CompletableFuture<Shared> wait;
      boolean mine = false;
      synchronized (this) {
        Shared s = byTtl.get(seconds);
        if (s != null && !s.lost) {
          s.users++;
          return new Lease(s.id, nanoTime.getAsLong() - s.refreshedAtNanos, true);
        }
        wait = granting.get(seconds);
        if (wait == null) {
          wait = new CompletableFuture<>();
          granting.put(seconds, wait);
          mine = true;
        }
      }
      if (mine) {
        grantShared(seconds, grant, wait);
      }
      await(wait); // rethrows the grant's failure to everyone who waited for it; else take it (or its successor)
    }
  }

  private void grantShared(long seconds, Supplier<Lease> grant, CompletableFuture<Shared> done) {
    long askedAt = nanoTime.getAsLong();
    try {
      Lease l = grant.get();
      Shared s = new Shared(l.id(), seconds, askedAt - l.ageNanos());
      synchronized (this) {
        Shared old = byTtl.put(seconds, s);
        if (old != null) {
          byId.remove(old.id);
        }
        byId.put(s.id, s);
        granting.remove(seconds);
        grants++;
      }
      done.complete(s);
    } catch (RuntimeException e) {
      synchronized (this) {
        granting.remove(seconds);
      }
      done.completeExceptionally(e);
    }
  }

  private static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException re ? re : new CompletionException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IoException(Failure.UNAVAILABLE, "interrupted while waiting for the shared lease", e);
    }
  }

  private synchronized void lost(long lease) {
    Shared s = byId.get(lease);
    if (s != null && !s.lost) {
      s.lost = true;
      log.info("shared lease {} is gone; its registrations register again on a new one", Long.toHexString(lease));
    }
  }

  /**
   * A keepalive of {@code lease} for a registration renewing every {@code interval}: the shared lease's last answer
   * when younger than half of that, the answer of a round trip in flight, or a round trip of its own.
   */
  private long keepAlive(long lease, Duration interval, RegistrarDriver.Io delegate) {
    Shared s;
    CompletableFuture<Long> inFlight;
    synchronized (this) {
      s = byId.get(lease);
      if (s == null) {
        inFlight = null; // not a shared lease (a duplicate's own, or one already replaced): its own round trip
      } else if (s.lost) {
        return 0;
      } else if (s.keepalive != null) {
        coalesced++;
        inFlight = s.keepalive;
      } else if (nanoTime.getAsLong() - s.refreshedAtNanos < interval.toNanos() / 2) {
        coalesced++;
        return s.lastTtl;
      } else {
        s.keepalive = new CompletableFuture<>();
        inFlight = null;
      }
    }
    if (s == null) {
      return delegate.keepAlive(lease);
    }
    if (inFlight != null) {
      return await(inFlight);
    }
    return roundTrip(s, delegate);
  }

  private long roundTrip(Shared s, RegistrarDriver.Io delegate) {
    long sent = nanoTime.getAsLong();
    CompletableFuture<Long> done;
    try {
      long ttl = delegate.keepAlive(s.id);
      synchronized (this) {
        done = s.keepalive;
        s.keepalive = null;
        roundTrips++;
        if (ttl <= 0) {
          s.lost = true;
        } else {
          s.refreshedAtNanos = sent;
          s.lastTtl = ttl;
        }
      }
      done.complete(ttl);
      return ttl;
    } catch (RuntimeException e) {
      synchronized (this) {
        done = s.keepalive;
        s.keepalive = null;
        if (e instanceof IoException io && io.failure() == Failure.LEASE_NOT_FOUND) {
          s.lost = true;
        }
      }
      done.completeExceptionally(e);
      throw e;
    }
  }

  /** One user less; the last one revokes the lease (its keys, including any whose delete failed, go with it). */
  private void release(long lease, RegistrarDriver.Io delegate) {
    boolean revoke;
    synchronized (this) {
      Shared s = byId.get(lease);
      if (s == null) {
        return;
      }
      s.users--;
      revoke = s.users <= 0;
      if (revoke) {
        byId.remove(lease);
        byTtl.remove(s.ttlSeconds, s);
      }
    }
    if (revoke) {
      try {
        delegate.revoke(lease);
      } catch (RuntimeException e) { // it expires by itself, with whatever key a failed delete left on it
        log.debug("could not revoke shared lease {}: {}", Long.toHexString(lease), e.getMessage());
      }
    }
  }

  private synchronized boolean claim(String key) {
    return claimed.add(key);
  }

  private synchronized void unclaim(String key) {
    claimed.remove(key);
  }

  /** After an answered keepalive: the deletes that failed before, tried once more each. */
  private void retryDeletes(KeyOps keys) {
    Map<String, Long> todo;
    synchronized (this) {
      if (pendingDeletes.isEmpty()) {
        return;
      }
      todo = new LinkedHashMap<>(pendingDeletes);
    }
    todo.forEach((key, modRevision) -> {
      try {
        keys.deleteIf(key, modRevision);
        synchronized (this) {
          pendingDeletes.remove(key, modRevision);
        }
      } catch (RuntimeException e) {
        log.debug("deleting {} of a closed registration failed again: {}", key, e.getMessage());
      }
    });
  }

  /** One registration's view: its driver's calls mapped onto the shared lease. Used on that registration's loop. */
  private final class Io implements RegistrarDriver.Io {
    private final String key;
    private final Duration keepaliveInterval;
    private final RegistrarDriver.Io delegate;
    private final KeyOps keys;
    /** The shared lease this registration counts as a user of (0: none). */
    private long held;
    /** The mod revision of this registration's last write of its key (0: none known). */
    private long lastWrite;
    /** A delete of its key that failed, by mod revision (0: none): the next revoke tries it again. */
    private long failedDelete;
    private boolean claimed;

    Io(String key, Duration keepaliveInterval, RegistrarDriver.Io delegate, KeyOps keys) {
      this.key = key;
      this.keepaliveInterval = keepaliveInterval;
      this.delegate = delegate;
      this.keys = keys;
    }

    @Override
    public long grant(Duration ttl) {
      return lease(ttl, () -> new Lease(delegate.grant(ttl), 0, false)).id();
    }

    @Override
    public Lease leaseForStart(Duration ttl) {
      return lease(ttl, () -> delegate.leaseForStart(ttl));
    }

    /** The shared lease; a lease of its own when another live registration of this registry holds the key. */
    private Lease lease(Duration ttl, Supplier<Lease> grant) {
      if (!claimed && !claim(key)) {
        return new Lease(delegate.grant(ttl), 0, false); // its put meets the holder's lease: a duplicate
      }
      claimed = true;
      giveBack(); // a lease it held before (lost, or an earlier attempt's): one user less there
      Lease l = acquire(ttl, grant);
      held = l.id();
      return l;
    }

    @Override
    public PutResult putIfAbsent(Instance instance, long lease) {
      PutResult r;
      try {
        r = delegate.putIfAbsent(instance, lease);
      } catch (IoException e) {
        lostIfNotFound(e, lease);
        throw e;
      }
      if (r.created()) {
        lastWrite = r.revision();
      } else if (r.holderLease() == lease && lease == held) {
        // an earlier try's put applied, its answer lost: its revision is the key's
        lastWrite = keys.modRevision(key).orElse(0);
      }
      return r;
    }

    @Override
    public long put(Instance instance, long lease) {
      try {
        long revision = delegate.put(instance, lease);
        lastWrite = revision;
        return revision;
      } catch (IoException e) {
        lostIfNotFound(e, lease);
        throw e;
      }
    }

    private void lostIfNotFound(IoException e, long lease) {
      if (e.failure() == Failure.LEASE_NOT_FOUND) {
        lost(lease);
      }
    }

    @Override
    public long keepAlive(long lease) {
      long ttl = SharedLeases.this.keepAlive(lease, keepaliveInterval, delegate);
      if (ttl > 0) {
        retryDeletes(keys);
      }
      return ttl;
    }

    /**
     * On the shared lease: deletes this registration's key if it is still its last write, and gives the lease back
     * (its last user revokes it). A delete etcd could not be reached for is rethrown, so the driver retries it as it
     * would a revoke; the lease is given back at once all the same, and the registry tries the delete again after
     * its next answered keepalive, so a key is never left behind on a lease others keep alive.
     */
    @Override
    public long revoke(long lease) {
      if (lease != held && failedDelete == 0) {
        unclaim();
        return delegate.revoke(lease); // a lease of its own
      }
      long modRevision = lease == held ? lastWrite : failedDelete;
      try {
        long revision = modRevision == 0 ? 0 : keys.deleteIf(key, modRevision); // 0: nothing written
        failedDelete = 0;
        synchronized (SharedLeases.this) {
          pendingDeletes.remove(key, modRevision);
        }
        return revision;
      } catch (RuntimeException e) {
        failedDelete = modRevision;
        synchronized (SharedLeases.this) {
          pendingDeletes.put(key, modRevision);
        }
        throw e;
      } finally {
        giveBack();
        unclaim();
      }
    }

    private void giveBack() {
      if (held != 0) {
        long lease = held;
        held = 0;
        lastWrite = 0;
        release(lease, delegate);
      }
    }

    private void unclaim() {
      if (claimed) {
        claimed = false;
        SharedLeases.this.unclaim(key);
      }
    }

    @Override
    public Optional<Duration> remaining(long lease) {
      return delegate.remaining(lease);
    }

    @Override
    public void connectionFailed() {
      delegate.connectionFailed();
    }
  }
}
