package dev.muster.etcd.internal;

import dev.muster.DuplicateInstanceException;
import dev.muster.InvalidInputException;
import dev.muster.RegistryUnavailableException;
import dev.muster.etcd.internal.EtcdErrors.Kind;
import dev.muster.etcd.internal.EtcdOps.EtcdCallException;
import dev.muster.etcd.internal.EtcdOps.PutIfAbsent;
import dev.muster.internal.Backoff;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationEvent.Type;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.RegistryLayout;
import io.etcd.jetcd.Client;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider's registration in etcd: a key under a lease, kept alive by a loop, re-created when etcd says the
 * lease is gone (SPEC §3).
 *
 * <h2>Design</h2>
 * <ul>
 *   <li><b>register</b> (caller's thread, bounded by {@code startTimeout}): grant a lease, then the transaction
 *       {@code if create_revision(key) == 0 then put(key, value, lease) else get(key)}. If the key is held by
 *       someone else, revoke our lease and throw {@link DuplicateInstanceException} naming the holder's lease and
 *       its remaining TTL. A lease we granted in an earlier attempt whose transaction timed out but was applied
 *       is recognised as ours, so a retry never reports a duplicate of itself.
 *   <li><b>keepalive</b>: one {@code LeaseKeepAlive} round trip every {@code keepaliveInterval}, scheduled on the
 *       monotonic clock ({@link ScheduledExecutorService} uses {@link System#nanoTime()}). After a SIGSTOP longer
 *       than the TTL the overdue tick runs as soon as the process resumes, so the loss is noticed within one round
 *       trip.
 *   <li><b>lease lost</b>: a TTL of 0 (or NOT_FOUND) means the lease and its key are gone; re-register at once
 *       with a new lease. With {@code reregister=false} keep renewing the dead lease id (the lab's negative
 *       control: a healthy provider nobody can see).
 *   <li><b>unreachable</b>: retry with full-jitter backoff from {@code retryBase} up to the keepalive interval;
 *       from the second failure on, replace the jetcd client so reconnects follow our backoff, not grpc-java's.
 *       etcd keeps leases across its own restarts, so when it answers again the same lease usually continues.
 *       With {@code maxFailures > 0}, give up (FAILED) after that many consecutive failures.
 *   <li><b>close</b>: put the value with state DRAINING, keep renewing for the drain period, then revoke
 *       (etcd deletes the key at once). A zero drain revokes at once: nobody could act on DRAINING, so it is
 *       not published. A revoke that cannot reach etcd is retried for up to two request timeouts; only then is
 *       FAILED reported and the key left to expire with its lease (etcd also extends every lease by its TTL when a
 *       leader is elected, so a key left behind can outlive the TTL across restarts).
 * </ul>
 *
 * <h2>Threading</h2>
 * Every etcd call after {@code register()} returns is made on this registration's own single thread
 * ({@code muster-registrar-ID}), which blocks for at most the request timeout per call. Public methods only submit
 * tasks to it; {@link #instance()}, {@link #leaseId()} and {@link #state()} read volatile fields. Listeners are
 * called on that thread, never under a lock.
 */
public final class EtcdRegistrar implements Registration {
  private static final Logger log = LoggerFactory.getLogger(EtcdRegistrar.class);
  /** Replace the jetcd client after this many consecutive connection failures. */
  private static final int RESET_AFTER_FAILURES = 2;

  private final EtcdConnection connection;
  private final String key;
  private final RegistrarConfig config;
  private final RegistrationListener listener;
  private final Clock clock;
  private final Backoff backoff;
  private final ScheduledExecutorService loop;
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final Thread shutdownHook;
  private final java.util.concurrent.CountDownLatch registered = new java.util.concurrent.CountDownLatch(1);

  private volatile Instance instance;
  private volatile long leaseId;
  private volatile RegistrationState state = RegistrationState.ACTIVE;

  // Loop-thread state (registerFirst runs before the loop starts, on the caller's thread).
  private int failures;
  private ScheduledFuture<?> pending;
  /** When the lease in use was granted: the first keepalive is due one interval after the grant, not the put. */
  private long grantedAtNanos;
  /** Leases granted by the current (re-)registration attempt; kept across retries until one succeeds. */
  private final List<Long> granted = new ArrayList<>();

  private boolean failedBeforeClose;

  // Guarded by this.
  private boolean closeRequested;

  private EtcdRegistrar(EtcdConnection connection, RegistryLayout layout, Instance instance, RegistrarConfig config,
      RegistrationListener listener, Clock clock, RandomGenerator random) {
    this.connection = connection;
    this.key = layout.instanceKey(instance);
    this.instance = instance;
    this.config = config;
    this.listener = listener;
    this.clock = clock;
    this.backoff = new Backoff(config.retryBase(), config.keepaliveInterval().compareTo(config.retryBase()) < 0
        ? config.retryBase() : config.keepaliveInterval(), random);
    this.loop = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "muster-registrar-" + instance.id());
      t.setDaemon(true);
      return t;
    });
    this.shutdownHook = config.shutdownHook() ? new Thread(this::closeFromHook, "muster-registrar-stop-"
        + instance.id()) : null;
    // The hook is in place before the first grant, so a SIGTERM that arrives while register() is still running
    // revokes what it created. Its close task queues behind this gate until register() has finished.
    loop.execute(this::awaitRegistered);
    if (shutdownHook != null) {
      Runtime.getRuntime().addShutdownHook(shutdownHook);
    }
  }

  /**
   * Registers {@code instance} and starts its keepalive loop. Blocks the caller until the key is written, the id
   * is found taken, or etcd stayed unreachable for {@code startTimeout}.
   */
  public static EtcdRegistrar register(EtcdConnection connection, RegistryLayout layout, Instance instance,
      RegistrarConfig config, RegistrationListener listener, Clock clock, RandomGenerator random) {
    Objects.requireNonNull(instance, "instance");
    EtcdRegistrar r = new EtcdRegistrar(connection, layout, instance, config, listener, clock, random);
    try {
      r.registerFirst();
    } catch (RuntimeException e) {
      r.abandon();
      throw e;
    } finally {
      r.registered.countDown();
    }
    return r;
  }

  @Override
  public Instance instance() {
    return instance;
  }

  @Override
  public long leaseId() {
    return leaseId;
  }

  @Override
  public RegistrationState state() {
    return state;
  }

  /** The etcd key this registration holds. */
  public String key() {
    return key;
  }

  @Override
  public CompletableFuture<Instance> update(UnaryOperator<Instance> change) {
    CompletableFuture<Instance> result = new CompletableFuture<>();
    submit(() -> applyUpdate(change, result), result);
    return result;
  }

  @Override
  public synchronized CompletableFuture<Void> closeAsync() {
    if (!closeRequested) {
      closeRequested = true;
      submit(this::beginDrain, closed);
    }
    return closed;
  }

  @Override
  public void close() {
    closeAsync();
    removeShutdownHook();
    awaitClosed();
  }

  @Override
  public String toString() {
    return "Registration[" + key + ", lease " + Long.toHexString(leaseId) + ", " + state + "]";
  }

  // ---- register ------------------------------------------------------------------------------------

  private void registerFirst() {
    long deadline = System.nanoTime() + config.startTimeout().toNanos();
    int attempt = 0;
    while (true) {
      Client client = connection.client();
      try {
        PutIfAbsent result = putUnderNewLease(client);
        leaseId = result.holderLease();
        revokeAllBut(client, leaseId);
        emit(Type.REGISTERED, leaseId, result.revision(), "");
        startLoop();
        return;
      } catch (EtcdCallException e) {
        if (e.kind() == Kind.OTHER) {
          revokeAllBut(client, 0);
          throw new RegistryUnavailableException("etcd at " + endpoints() + " refused to register " + key + ": "
              + e.getMessage(), e);
        }
        if (System.nanoTime() - deadline > 0) {
          throw new RegistryUnavailableException("etcd at " + endpoints() + " did not answer within "
              + config.startTimeout().toMillis() + " ms (" + e.getMessage() + "): start etcd (./muster etcd)"
              + " or check --endpoints", e);
        }
        if (++attempt >= RESET_AFTER_FAILURES) {
          connection.reset(client);
        }
        sleep(backoff.delay(attempt - 1));
      }
    }
  }

  /** Registration failed: nothing to keep alive or revoke; release the thread, the hook and any waiter. */
  private void abandon() {
    state = RegistrationState.CLOSED;
    closed.complete(null);
    removeShutdownHook();
    loop.shutdownNow();
  }

  /**
   * Grants a lease and puts the key if absent. Returns the put's result, or throws {@link
   * DuplicateInstanceException} when someone else holds the key (after revoking every lease we granted).
   */
  private PutIfAbsent putUnderNewLease(Client client) {
    long lease = EtcdOps.grant(client, config.ttl(), config.requestTimeout());
    grantedAtNanos = System.nanoTime();
    granted.add(lease);
    PutIfAbsent result = EtcdOps.putIfAbsent(client, key, InstanceCodec.encode(instance), lease,
        config.requestTimeout());
    if (result.created() || granted.contains(result.holderLease())) {
      return result.created() ? result : new PutIfAbsent(true, result.revision(), result.holderLease());
    }
    Duration remaining = remainingOrZero(client, result.holderLease());
    revokeAllBut(client, 0);
    throw new DuplicateInstanceException(key, result.holderLease(), remaining);
  }

  private Duration remainingOrZero(Client client, long lease) {
    try {
      return EtcdOps.remaining(client, lease, config.requestTimeout()).orElse(Duration.ZERO);
    } catch (EtcdCallException e) {
      return Duration.ZERO;
    }
  }

  /** Revokes every lease this attempt granted except {@code keep}; ends the attempt. */
  private void revokeAllBut(Client client, long keep) {
    for (long lease : granted) {
      if (lease != keep) {
        try {
          EtcdOps.revoke(client, lease, config.requestTimeout());
        } catch (EtcdCallException e) {
          log.debug("could not revoke unused lease {}: {}", Long.toHexString(lease), e.getMessage());
        }
      }
    }
    granted.clear();
  }

  private void startLoop() {
    schedule(this::keepalive, firstKeepaliveDelay());
  }

  /**
   * One keepalive interval after the grant. On a loaded machine the put can come seconds after the grant; timing
   * the first keepalive from the put would let a short lease expire before it is ever renewed.
   */
  private Duration firstKeepaliveDelay() {
    long sinceGrant = System.nanoTime() - grantedAtNanos;
    return Duration.ofNanos(Math.max(0, config.keepaliveInterval().toNanos() - sinceGrant));
  }

  // ---- loop-thread steps ---------------------------------------------------------------------------

  private void keepalive() {
    if (state == RegistrationState.CLOSED || state == RegistrationState.FAILED) {
      return;
    }
    Client client = connection.client();
    long lease = leaseId;
    try {
      long ttl = EtcdOps.keepAliveOnce(client, lease, config.requestTimeout());
      if (ttl <= 0) {
        onLeaseLost(lease);
        return;
      }
      failures = 0;
      if (config.reportKeepalives()) {
        emit(Type.KEEPALIVE, lease, 0, "ttl " + ttl + "s");
      }
      if (state == RegistrationState.UNREACHABLE) {
        state = RegistrationState.ACTIVE;
        emit(Type.RECONNECTED, lease, 0, "the same lease continues (ttl " + ttl + "s)");
      }
      schedule(this::keepalive, config.keepaliveInterval());
    } catch (EtcdCallException e) {
      if (e.kind() == Kind.LEASE_NOT_FOUND) {
        onLeaseLost(lease);
      } else {
        onUnreachable(client, e, this::keepalive);
      }
    }
  }

  private void onLeaseLost(long lease) {
    failures = 0;
    if (state == RegistrationState.DRAINING) {
      log.info("lease {} of {} ended while draining", Long.toHexString(lease), key);
      return; // nothing to renew; the drain timer still revokes (a no-op) and closes
    }
    if (state != RegistrationState.LEASE_LOST) {
      state = RegistrationState.LEASE_LOST;
      emit(Type.LEASE_LOST, lease, 0, config.reregister() ? "re-registering with a new lease"
          : "re-registration is off: renewing the dead lease id");
    }
    if (config.reregister()) {
      reregister();
    } else {
      schedule(this::keepalive, config.keepaliveInterval());
    }
  }

  private void reregister() {
    if (state != RegistrationState.LEASE_LOST) {
      return;
    }
    Client client = connection.client();
    try {
      PutIfAbsent result = putUnderNewLease(client);
      leaseId = result.holderLease();
      revokeAllBut(client, leaseId);
      failures = 0;
      state = RegistrationState.ACTIVE;
      emit(Type.REREGISTERED, leaseId, result.revision(), "");
      schedule(this::keepalive, firstKeepaliveDelay());
    } catch (DuplicateInstanceException e) {
      fail(e.getMessage());
    } catch (EtcdCallException e) {
      if (e.kind() == Kind.OTHER) {
        revokeAllBut(client, 0);
        fail(e.getMessage());
      } else {
        onUnreachable(client, e, this::reregister);
      }
    }
  }

  private void onUnreachable(Client client, EtcdCallException e, Runnable retry) {
    failures++;
    if (state == RegistrationState.ACTIVE) {
      state = RegistrationState.UNREACHABLE;
      emit(Type.UNREACHABLE, leaseId, 0, e.getMessage());
    }
    if (config.maxFailures() > 0 && failures >= config.maxFailures()) {
      fail("gave up after " + failures + " consecutive failed calls to etcd at " + endpoints() + " (last: "
          + e.getMessage() + ")");
      return;
    }
    if (failures >= RESET_AFTER_FAILURES) {
      connection.reset(client);
    }
    schedule(retry, backoff.delay(failures - 1));
  }

  private void applyUpdate(UnaryOperator<Instance> change, CompletableFuture<Instance> result) {
    Instance current = instance;
    Instance next = change.apply(current);
    if (next == null || !next.key().equals(current.key())) {
      result.completeExceptionally(new InvalidInputException("instance", next == null ? "null" : next.key().path(),
          "an update may change weight, state, zone, tags and metadata, not namespace, service, version or id ("
              + current.key().path() + ")"));
      return;
    }
    if (state == RegistrationState.CLOSED || state == RegistrationState.FAILED
        || state == RegistrationState.DRAINING) {
      result.completeExceptionally(new IllegalStateException("registration " + key + " is " + state
          + ": it can no longer be updated"));
      return;
    }
    byte[] value = InstanceCodec.encode(next);
    instance = next; // also what a re-registration writes, should the lease turn out to be gone
    if (state == RegistrationState.LEASE_LOST) {
      result.complete(next); // the pending re-registration writes it
      return;
    }
    try {
      long revision = EtcdOps.put(connection.client(), key, value, leaseId, config.requestTimeout());
      emit(Type.UPDATED, leaseId, revision, "");
      result.complete(next);
    } catch (EtcdCallException e) {
      if (e.kind() == Kind.LEASE_NOT_FOUND) {
        result.complete(next);
        onLeaseLost(leaseId);
      } else {
        instance = current;
        result.completeExceptionally(new RegistryUnavailableException("could not update " + key + ": "
            + e.getMessage() + "; try again", e));
      }
    }
  }

  private void beginDrain() {
    if (state == RegistrationState.CLOSED) {
      closed.complete(null);
      return;
    }
    cancelPending();
    if (state == RegistrationState.FAILED) {
      failedBeforeClose = true;
      finishClose();
      return;
    }
    boolean leaseAlive = state != RegistrationState.LEASE_LOST;
    state = RegistrationState.DRAINING;
    long revision = 0;
    String detail = "drain " + config.drain().toMillis() + " ms";
    // With no drain time nobody could act on DRAINING before the revoke: publishing it would only cost one more
    // raft commit and one more event at every consumer (the bench's close→gone row measured it at ~2x the floor).
    if (config.drain().isZero()) {
      detail += "; DRAINING not published";
    } else if (leaseAlive) {
      Instance draining = instance.state(InstanceState.DRAINING);
      try {
        revision = EtcdOps.put(connection.client(), key, InstanceCodec.encode(draining), leaseId,
            config.requestTimeout());
        instance = draining;
      } catch (RuntimeException e) { // etcd unreachable, or the JVM shutting down: revoke regardless
        detail += "; could not publish DRAINING: " + e.getMessage();
      }
    }
    emit(Type.DRAINING, leaseId, revision, detail);
    if (config.drain().isZero()) {
      finishClose();
    } else {
      schedule(this::keepaliveWhileDraining, config.keepaliveInterval());
      loop.schedule(this::finishClose, config.drain().toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  private void keepaliveWhileDraining() {
    if (state != RegistrationState.DRAINING) {
      return;
    }
    try {
      EtcdOps.keepAliveOnce(connection.client(), leaseId, config.requestTimeout());
    } catch (EtcdCallException e) {
      log.debug("keepalive while draining {} failed: {}", key, e.getMessage());
    }
    schedule(this::keepaliveWhileDraining, config.keepaliveInterval());
  }

  /**
   * Revokes the lease, retrying while etcd is unreachable for up to twice the request timeout: a blip (an etcd
   * restart, a cut connection) must not leave the key behind, where etcd would keep it for the TTL and extend it
   * again at every leader election. {@link #close()} waits for this (its limit is drain + 3 request timeouts).
   */
  private void finishClose() {
    cancelPending();
    revoke(leaseId, 0, System.nanoTime() + config.requestTimeout().multipliedBy(2).toNanos());
  }

  /** One revoke attempt; a retry is scheduled on the loop (with the backoff), never slept for. */
  private void revoke(long lease, int attempt, long giveUpAtNanos) {
    Client client = connection.client();
    try {
      long revision = EtcdOps.revoke(client, lease, config.requestTimeout());
      emit(Type.REVOKED, lease, revision, attempt == 0 ? "" : "after " + attempt + " failed attempt(s)");
    } catch (RuntimeException re) {
      EtcdCallException e = re instanceof EtcdCallException ce ? ce
          : new EtcdCallException("revoke lease " + Long.toHexString(lease), re);
      if (e.kind() == Kind.UNAVAILABLE && System.nanoTime() - giveUpAtNanos < 0) {
        if (attempt + 1 >= RESET_AFTER_FAILURES) {
          connection.reset(client);
        }
        schedule(() -> revoke(lease, attempt + 1, giveUpAtNanos), backoff.delay(attempt));
        return;
      }
      reportRevokeFailure(lease, e);
    }
    state = RegistrationState.CLOSED;
    closed.complete(null);
    loop.shutdown();
  }

  private void reportRevokeFailure(long lease, EtcdCallException e) {
    if (e.kind() == Kind.LEASE_NOT_FOUND) {
      emit(Type.REVOKED, lease, 0, "the lease had already ended");
    } else if (failedBeforeClose) {
      log.info("could not revoke lease {} of failed registration {}: {}", Long.toHexString(lease), key,
          e.getMessage()); // FAILED was already reported once
    } else {
      emit(Type.FAILED, lease, 0, "could not revoke the lease (" + e.getMessage() + "); the key expires with it"
          + " within " + config.ttl().toSeconds() + "s");
    }
  }

  private void fail(String why) {
    cancelPending();
    state = RegistrationState.FAILED;
    emit(Type.FAILED, leaseId, 0, why);
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  private void schedule(Runnable step, Duration delay) {
    cancelPending();
    pending = loop.schedule(() -> runStep(step), delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void runStep(Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      log.error("registrar step for {} failed unexpectedly; retrying in {}", key, config.keepaliveInterval(), e);
      if (state != RegistrationState.CLOSED && state != RegistrationState.FAILED) {
        schedule(this::keepalive, config.keepaliveInterval());
      }
    }
  }

  private void cancelPending() {
    if (pending != null) {
      pending.cancel(false);
      pending = null;
    }
  }

  private void submit(Runnable task, CompletableFuture<?> onRejected) {
    try {
      loop.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          onRejected.completeExceptionally(e);
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      if (onRejected == closed) {
        closed.complete(null);
      } else {
        onRejected.completeExceptionally(new IllegalStateException("registration " + key + " is closed"));
      }
    }
  }

  private void emit(Type type, long lease, long revision, String detail) {
    RegistrationEvent event = new RegistrationEvent(type, clock.instant(), instance.id(), lease, revision, detail);
    log.debug("{}", event);
    try {
      listener.onEvent(event);
    } catch (RuntimeException e) {
      log.warn("registration listener threw on {}; ignored", type, e);
    }
  }

  private void awaitRegistered() {
    try {
      registered.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeFromHook() {
    closeAsync();
    awaitClosed();
  }

  private void awaitClosed() {
    Duration limit = config.drain().plus(config.requestTimeout().multipliedBy(3)).plusSeconds(1);
    try {
      closed.get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      log.warn("closing {} took longer than {} ms; the lease will expire by itself", key, limit.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      log.warn("closing {} failed: {}", key, e.getCause().toString());
    }
  }

  private void removeShutdownHook() {
    if (shutdownHook == null) {
      return;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(shutdownHook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down; the hook is running or will run close() too, which is idempotent
    }
  }

  private String endpoints() {
    return connection.config().endpoints().toString();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(Math.max(1, d.toMillis()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RegistryUnavailableException("interrupted while waiting for etcd", e);
    }
  }
}
