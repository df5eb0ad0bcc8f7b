package dev.muster.etcd.internal;

import dev.muster.registry.internal.RegistrarDriver;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases granted ahead of time, at most one per TTL, so that a first registration costs one raft commit (its
 * put-if-absent) instead of two (grant, then put). One pool per {@code EtcdRegistry}; docs/design-perf2.md §1.
 *
 * <p>The life of a lease here:
 * <pre>
 * (none) --refill(ttl) after a first registration's put--> GRANTING --etcd answers--> READY
 * GRANTING --etcd fails or times out-->                    (none); the next registration grants its own
 * READY --take(ttl), granted less than TTL/3 ago-->        handed out (the registration owns it), refill follows
 * READY --take(ttl), older-->                              revoked in the background (unless already expired)
 * READY --close()-->                                       revoked (best effort); GRANTING then revokes on answer
 * </pre>
 * The age is counted from when the grant was asked for, before etcd started the lease, so it is never
 * underestimated: a lease handed out has at least two thirds of its TTL left, as much as a lease of ours has after
 * a keepalive. Nobody keeps a ready lease alive; one nobody takes expires by itself, without ever holding a key.
 *
 * <p>Thread-safe: the maps are guarded by {@code this}; grants and revokes are jetcd's asynchronous calls, so no
 * registration's loop waits for a refill, and their completions run on jetcd's executor. Only {@link #close()}
 * waits, for at most the request timeout.
 */
public final class LeasePool implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LeasePool.class);

  private record Ready(long id, long askedAtNanos) {}

  private final EtcdConnection connection;
  private final Duration requestTimeout;
  private final LongSupplier nanoTime;
  /** By TTL in seconds. */
  private final Map<Long, Ready> ready = new HashMap<>();
  /** TTLs (seconds) with a grant in flight. */
  private final Set<Long> granting = new HashSet<>();
  private boolean closed;
  private final SharedLeases shared;

  public LeasePool(EtcdConnection connection, LongSupplier nanoTime) {
    this.connection = connection;
    this.requestTimeout = connection.config().requestTimeout();
    this.nanoTime = nanoTime;
    this.shared = new SharedLeases(nanoTime);
  }

  /** The leases this registry shares among its registrations that ask for it ({@code RegistrarConfig.sharedLease}). */
  public SharedLeases shared() {
    return shared;
  }

  /**
   * The ready lease of {@code ttl} if it is fresh (granted less than TTL/3 ago), with its age counted from when its
   * grant was asked for; it is the caller's from now.
   */
  Optional<RegistrarDriver.Lease> take(Duration ttl) {
    Ready lease;
    synchronized (this) {
      lease = ready.remove(ttl.toSeconds());
    }
    if (lease == null) {
      return Optional.empty();
    }
    long age = nanoTime.getAsLong() - lease.askedAtNanos();
    if (age < ttl.toNanos() / 3) {
      return Optional.of(new RegistrarDriver.Lease(lease.id(), age, true));
    }
    if (age < ttl.toNanos()) {
      revokeInBackground(lease.id());
    }
    return Optional.empty();
  }

  /** Grants a lease of {@code ttl} in the background, unless one is ready or on its way, or the pool is closed. */
  void refill(Duration ttl) {
    long seconds = ttl.toSeconds();
    Client client;
    synchronized (this) {
      if (closed || ready.containsKey(seconds) || !granting.add(seconds)) {
        return;
      }
      client = connection.client();
    }
    long askedAt = nanoTime.getAsLong();
    CompletableFuture<LeaseGrantResponse> grant;
    try {
      grant = client.getLeaseClient().grant(seconds).orTimeout(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RuntimeException e) { // a client closing under us
      synchronized (this) {
        granting.remove(seconds);
      }
      log.debug("could not grant a lease ahead: {}", e.toString());
      return;
    }
    grant.whenComplete((response, failure) -> granted(seconds, askedAt, response, failure));
  }

  private void granted(long seconds, long askedAt, LeaseGrantResponse response, Throwable failure) {
    boolean keep;
    synchronized (this) {
      granting.remove(seconds);
      keep = failure == null && !closed;
      if (keep) {
        ready.put(seconds, new Ready(response.getID(), askedAt));
      }
    }
    if (failure != null) {
      log.debug("could not grant a lease ahead: {}", EtcdErrors.describe(failure));
    } else if (!keep) {
      revokeInBackground(response.getID());
    }
  }

  /** The ids of the ready leases (for tests). */
  public synchronized List<Long> readyIds() {
    return ready.values().stream().map(Ready::id).toList();
  }

  /**
   * Revokes the ready leases that have not expired yet, waiting at most the request timeout. A grant still in
   * flight revokes its lease when it completes. Never throws: a lease left behind has no key and expires.
   */
  @Override
  public void close() {
    Map<Long, Ready> left;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      left = new HashMap<>(ready);
      ready.clear();
    }
    long now = nanoTime.getAsLong();
    List<CompletableFuture<?>> revokes = new ArrayList<>();
    left.forEach((ttlSeconds, lease) -> {
      if (now - lease.askedAtNanos() < TimeUnit.SECONDS.toNanos(ttlSeconds)) {
        revokes.add(revokeInBackground(lease.id()));
      }
    });
    try {
      CompletableFuture.allOf(revokes.toArray(CompletableFuture[]::new))
          .get(requestTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (Exception e) { // interrupted, timed out or failed: the leases expire by themselves
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      log.debug("could not revoke every lease granted ahead: {}", e.toString());
    }
  }

  private CompletableFuture<?> revokeInBackground(long id) {
    try {
      return connection.client().getLeaseClient().revoke(id)
          .orTimeout(requestTimeout.toNanos(), TimeUnit.NANOSECONDS)
          .handle((r, e) -> {
            if (e != null) {
              log.debug("could not revoke lease {} granted ahead: {}", Long.toHexString(id),
                  EtcdErrors.describe(e));
            }
            return null;
          });
    } catch (RuntimeException e) { // the connection is closed: the lease expires by itself
      log.debug("could not revoke lease {} granted ahead: {}", Long.toHexString(id), e.toString());
      return CompletableFuture.completedFuture(null);
    }
  }
}
