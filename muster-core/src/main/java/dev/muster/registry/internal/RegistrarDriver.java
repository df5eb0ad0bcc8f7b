package dev.muster.registry.internal;

import dev.muster.AccessDeniedException;
import dev.muster.DuplicateInstanceException;
import dev.muster.ErrorCode;
import dev.muster.InvalidInputException;
import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.internal.Backoff;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationEvent.Type;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistrationState;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Longer than our 500-line guide for the same reason as CacheDriver: the transitions and the I/O contract they
 * drive (Io, Timer) are meant to be read together, in one place.
 */
/**
 * The provider's state machine (SPEC §3): one key under a lease, kept alive, re-created when etcd says the lease is
 * gone, drained and revoked on close. Its I/O is behind {@link Io} and its timers behind {@link Timer}, so the same
 * code runs against etcd (run by {@link LiveRegistration} over muster-etcd's {@code EtcdRegistrarIo}) and against a
 * scripted registry on a fake clock.
 *
 * <pre>
 * STARTING --lease + put-if-absent ok-->          ACTIVE (REGISTERED); first keepalive one interval after the grant
 *                                                 (the lease: one granted ahead by the registry, or granted now)
 * STARTING --unreachable-->                       STARTING, retry after backoff until startTimeout, then the start
 *                                                 fails (RegistryUnavailableException); refused: fails at once.
 *                                                 A retry renews the attempt's lease (one keepalive) and puts under
 *                                                 it again; only a lease etcd no longer knows is replaced
 * STARTING --key held by another lease-->         revoke ours, the start fails (DuplicateInstanceException)
 * ACTIVE   --keepalive ok-->                      ACTIVE, next keepalive after keepaliveInterval
 * ACTIVE   --keepalive unreachable-->             UNREACHABLE (UNREACHABLE), retry after backoff
 * UNREACHABLE --keepalive ok, same lease-->       ACTIVE (RECONNECTED)
 * ACTIVE/UNREACHABLE --TTL 0 / lease not found--> LEASE_LOST (LEASE_LOST), re-register at once with a new lease
 * LEASE_LOST --put under a new lease-->           ACTIVE (REREGISTERED)
 * LEASE_LOST --unreachable-->                     LEASE_LOST, retry the re-registration after backoff
 * ACTIVE/UNREACHABLE/LEASE_LOST --maxFailures consecutive failures, id taken, refused--> FAILED (FAILED)
 * any but CLOSED --close-->                       DRAINING (put state DRAINING, DRAINING); keepalive every interval
 * any but CLOSED/FAILED --drain-->                DRAINING, the same, but nothing is revoked at the period's end
 * DRAINING --drain elapsed, close asked-->        revoke; unreachable: retry for up to 2 x requestTimeout
 * DRAINING --drain elapsed, only drain asked-->   DRAINED (DRAINED); keepalive every interval until close
 * DRAINED  --close-->                             revoke at once (the drain is done)
 * revoke ok / lease gone / given up-->            CLOSED (REVOKED, or FAILED when the key is left to expire)
 * FAILED   --close-->                             revoke (best effort), CLOSED
 * </pre>
 *
 * <p>Rules that the tests hold it to:
 * <ul>
 *   <li>A close during STARTING waits for the start to end: a registration that succeeds is then drained and
 *       revoked (a SIGTERM during {@code register()} leaves nothing behind); one that fails simply ends.
 *   <li>One lease per (re-)registration attempt, kept across its retries: a retry first renews it (one
 *       keepalive), then puts under it again. A put that timed out but was applied is thus recognised as ours (the
 *       key's holder is our lease), so a retry never reports a duplicate of itself, and the key it wrote stays alive
 *       through retries that together outlast the TTL (etcd slow under load: answers late, applies anyway), where
 *       a new lease per retry let the first one expire and consumers see the key leave and come back. etcd is asked
 *       for one lease, not one per retry. A lease etcd no longer knows is replaced; a lease left when the attempt
 *       ends without a registration is revoked (when etcd answers). The first keepalive is due one interval after
 *       the lease's grant or its last renewal by a retry.
 *   <li>Every call that fails because etcd could not be reached is reported through {@link Io#connectionFailed()};
 *       the registrar never replaces the connection itself. The connection is shared with other registrations and
 *       caches and decides (docs/design-storms.md): it replaces nothing while etcd refuses connections, replaces
 *       its client once when etcd accepts again, and otherwise only a client nobody succeeded on since the failed
 *       call began and that had twice its connect timeout to connect (on a loaded machine a new connection, with a
 *       TLS handshake and a password check, can take longer than one call's deadline). Retries follow our backoff
 *       (full jitter from {@code retryBase} up to the keepalive interval).
 *   <li>Only a first registration may use a lease granted ahead ({@link Io#leaseForStart}); its first keepalive
 *       is due one interval after that lease's grant, however long ago. Should etcd no longer know it, the same
 *       attempt grants a new one and puts again. A re-registration after a lost lease always grants afresh: a
 *       cluster that has just lost leases is not handed one granted before the loss.
 *   <li>A zero drain revokes at once and does not publish DRAINING: nobody could act on it. A {@code drain()} with
 *       a zero period goes straight to DRAINED, still UP in etcd: the caller's next step is the close.
 *   <li>{@link #drained()} completes when the drain period has ended (or at once when there is nothing to drain:
 *       closed, failed), whoever began the drain: so {@code drain()} then {@code close()} is the graceful stop with
 *       the application's own work between the two (a server's GOAWAY and its calls' end), and {@code close()}
 *       alone is the same stop with nothing between.
 *   <li>A lease lost while DRAINING or DRAINED is not replaced: a draining instance must not come back UP.
 *   <li>With {@link RegistrarControls#reregister()} off (the lab's negative control) a lost lease is not replaced:
 *       the dead lease id keeps being renewed, a healthy provider nobody can see.
 * </ul>
 *
 * <h2>Threading</h2>
 * Not thread-safe: every input ({@link #start()}, {@link #update}, {@link #drain()}, {@link #close()}) and every
 * task handed to
 * {@link Timer} must run on one serialized executor, the registration's loop. {@link Io} calls are made on that
 * loop and block it for at most the request timeout each (as {@code CacheDriver}'s range does); their outcome is
 * their return value or an {@link IoException}, so a result can never arrive out of order. Nothing here sleeps:
 * every wait is a {@link Timer} task. Time comes from the injected ticker. {@link #state()}, {@link #leaseId()} and
 * {@link #instance()} read volatile fields and may be called anywhere; the listener is called on the loop, and an
 * exception it throws is logged and ignored.
 *
 * <p>What "one serialized executor" is ({@code dev.muster.internal.SerialExecutor} in {@link LiveRegistration};
 * docs/design-registrations.md §1–2): every input runs while holding the registration's run permit, on whichever
 * thread holds it: a pool thread, or a caller blocked in {@code register()} or {@code close()} on that registration.
 * Nothing else ever holds it. So the listener may be called on such a caller's own thread, inside its {@code
 * register()} or {@code close()}; an input it submits from there (an {@code update()}) is queued behind the running
 * one, never run inside it.
 */
public final class RegistrarDriver {
  private static final Logger log = LoggerFactory.getLogger(RegistrarDriver.class);
  /** The outcome of a put-if-absent: either our revision, or the key's current holder. */
  public record PutResult(boolean created, long revision, long holderLease) {}

  /**
   * A lease to register under.
   *
   * @param id the lease id
   * @param ageNanos how long ago it was granted (0 for one granted just now)
   * @param ahead whether it was granted ahead of time, before this registration asked for it
   */
  public record Lease(long id, long ageNanos, boolean ahead) {}

  /** The registry operations, implemented by an adapter (etcd) or a test script. Called on the driver's loop. */
  public interface Io {
    /** Grants a lease of {@code ttl}; returns its id. */
    long grant(Duration ttl);

    /**
     * A lease of {@code ttl} for a first registration: one granted ahead of time when the adapter holds a fresh
     * one (its time left at least two thirds of the TTL), else one granted now. The default grants now.
     */
    default Lease leaseForStart(Duration ttl) {
      return new Lease(grant(ttl), 0, false);
    }

    /** {@code if create_revision(key) == 0 then put(key, instance, lease) else get(key)}, atomically. */
    PutResult putIfAbsent(Instance instance, long lease);

    /** Puts on the lease; fails with {@link Failure#LEASE_NOT_FOUND} when it is gone. Returns the revision. */
    long put(Instance instance, long lease);

    /** One keepalive round trip; returns the TTL granted in seconds (0 or less: the lease is gone). */
    long keepAlive(long lease);

    /** Revokes the lease (etcd deletes its keys); returns the revision. */
    long revoke(long lease);

    /** The lease's remaining TTL, empty when it does not exist. */
    Optional<Duration> remaining(long lease);

    /**
     * The last call failed because etcd could not be reached in time ({@link Failure#UNAVAILABLE}). The connection
     * is shared and decides itself whether to replace its client; may block briefly (a shared TCP probe).
     */
    void connectionFailed();
  }

  /** What a failed {@link Io} call means. */
  public enum Failure {
    /** The lease does not exist (expired or revoked). */
    LEASE_NOT_FOUND,
    /** The registry could not be reached in time: try again later. */
    UNAVAILABLE,
    /** The registry answered with a refusal that retrying will not fix. */
    REFUSED,
    /** The registry refused the credentials (wrong password, unknown user, a certificate refused). */
    UNAUTHENTICATED,
    /** The registry knows the user, but its roles do not allow the key. */
    DENIED;

    /** Whether retrying the same call cannot succeed. */
    boolean refusal() {
      return this == REFUSED || this == UNAUTHENTICATED || this == DENIED;
    }
  }

  /** An {@link Io} call failed; the message names the call and the reason. */
  public static final class IoException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final Failure failure;

    public IoException(Failure failure, String message, Throwable cause) {
      super(message, cause);
      this.failure = Objects.requireNonNull(failure, "failure");
    }

    public Failure failure() {
      return failure;
    }
  }

  /** Schedules tasks on the driver's loop. */
  public interface Timer {
    /** Runs {@code task} after {@code delay} on the driver's loop; the returned handle cancels it. */
    Runnable schedule(Runnable task, Duration delay);
  }

  private final String key;
  private final String endpoints;
  private final RegistrarConfig config;
  private final RegistrarControls controls;
  private final Io io;
  private final Timer timer;
  private final Clock clock;
  private final LongSupplier nanoTime;
  private final Backoff backoff;
  private final RegistrationListener listener;
  private final CompletableFuture<Void> started = new CompletableFuture<>();
  private final CompletableFuture<Void> closed = new CompletableFuture<>();
  private final CompletableFuture<Void> drained = new CompletableFuture<>();

  // Read from any thread.
  private volatile Instance instance;
  private volatile long leaseId;
  private volatile RegistrationState state = RegistrationState.ACTIVE;
  private volatile String leftBehind;
  // Counts for metrics: written on the loop only, read anywhere (each a volatile long: one writer).
  private volatile long keepalives;
  private volatile long keepaliveNanos;
  private volatile long leaseLosses;
  private volatile long reregistrations;
  private volatile long drains;

  // Loop state.
  private boolean starting;
  private boolean closeRequested;
  private boolean drainRequested;
  private long startDeadlineNanos;
  private int startAttempts;
  private int failures;
  private Runnable cancelPending = () -> { };
  private Runnable cancelDrain = () -> { };
  /**
   * When the lease in use was granted or last renewed by a retry ({@code nanoTime}): the first keepalive is due one
   * interval after it, not after the put.
   */
  private long grantedAtNanos;
  private long valuePutAtNanos; // the last put of the value (signed then: its notAfter counts from about here)
  private long idTakenSinceNanos; // since when a re-registration has found its id held by another lease; 0: not
  /** The lease of the current (re-)registration attempt, kept across its retries until one succeeds; 0: none. */
  private long attemptLease;
  private boolean failedBeforeClose;

  /**
   * @param key the registry key this registration holds (for messages and errors)
   * @param endpoints where the registry is, for messages
   */
  public RegistrarDriver(String key, String endpoints, Instance instance, RegistrarConfig config,
      RegistrarControls controls, Io io, Timer timer, Clock clock, LongSupplier nanoTime, RandomGenerator random,
      RegistrationListener listener) {
    this.key = Objects.requireNonNull(key, "key");
    this.endpoints = Objects.requireNonNull(endpoints, "endpoints");
    this.instance = Objects.requireNonNull(instance, "instance");
    this.config = Objects.requireNonNull(config, "config");
    this.controls = Objects.requireNonNull(controls, "controls");
    this.io = Objects.requireNonNull(io, "io");
    this.timer = Objects.requireNonNull(timer, "timer");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.backoff = new Backoff(config.retryBase(), config.keepaliveInterval().compareTo(config.retryBase()) < 0
        ? config.retryBase() : config.keepaliveInterval(), Objects.requireNonNull(random, "random"));
    this.listener = listener == null ? RegistrationListener.NONE : listener;
  }

  // ---- status (any thread) -------------------------------------------------------------------------

  public Instance instance() {
    return instance;
  }

  public long leaseId() {
    return leaseId;
  }

  public RegistrationState state() {
    return state;
  }

  /**
   * Completes when the first registration succeeded; fails with {@link DuplicateInstanceException} or {@link
   * RegistryUnavailableException} (or whatever else ended the start), after which the driver is closed.
   */
  public CompletableFuture<Void> started() {
    return started;
  }

  /** Completes when the driver is done: the lease revoked, left to expire, or never granted. */
  public CompletableFuture<Void> closed() {
    return closed;
  }

  /**
   * Completes when the drain period has ended (the lease still alive unless a close followed), or at once for a
   * registration with nothing to drain (closed, failed, never started). Completed on the loop: chain slow work
   * with an {@code *Async} stage.
   */
  public CompletableFuture<Void> drained() {
    return drained;
  }

  /** What the registration has done so far; from any thread. */
  public dev.muster.registry.RegistrationStats stats() {
    return new dev.muster.registry.RegistrationStats(keepalives, Duration.ofNanos(keepaliveNanos), leaseLosses,
        reregistrations, drains);
  }

  /** Why the close could not revoke the lease (the key expires with it), or empty. Set before {@link #closed()}. */
  public Optional<String> leftBehind() {
    return Optional.ofNullable(leftBehind);
  }

  // ---- inputs (loop) -------------------------------------------------------------------------------

  /** Starts the first registration; its outcome completes {@link #started()}. */
  public void start() {
    if (starting || started.isDone()) {
      return;
    }
    starting = true;
    startDeadlineNanos = nanoTime.getAsLong() + config.startTimeout().toNanos();
    attemptStart();
  }

  /** Applies {@code change} to the instance and writes it; completes {@code result} with the new instance. */
  public void update(UnaryOperator<Instance> change, CompletableFuture<Instance> result) {
    try {
      applyUpdate(change, result);
    } catch (RuntimeException e) {
      result.completeExceptionally(e);
    }
  }

  /**
   * Drains without revoking: publishes DRAINING, keeps the lease alive; {@link #drained()} completes when the
   * drain period has passed, and the registration then stays DRAINED until {@link #close()}. A second call, or one
   * after a close began the drain, is a no-op.
   */
  public void drain() {
    if (drainRequested) {
      return;
    }
    drainRequested = true;
    if (starting) {
      return; // the start's end continues the drain
    }
    switch (state) {
      case CLOSED, FAILED -> drained.complete(null); // nothing to drain; close() still revokes a FAILED one
      case DRAINING, DRAINED -> { } // a close began it: its end completes drained()
      default -> beginDrain();
    }
  }

  /**
   * Drains and revokes; {@link #closed()} completes when done. After {@link #drain()} has ended, revokes at once;
   * during a drain, revokes at its end. A second close is a no-op.
   */
  public void close() {
    if (closeRequested) {
      return;
    }
    closeRequested = true;
    if (starting) {
      return; // the start's end continues the close (see the class comment)
    }
    switch (state) {
      case DRAINED -> finishClose();
      case DRAINING -> { } // drainElapsed() revokes
      default -> beginDrain();
    }
  }

  // ---- start ---------------------------------------------------------------------------------------

  private void attemptStart() {
    try {
      PutResult result = putUnderAttemptLease(true);
      leaseId = result.holderLease();
      attemptLease = 0;
      emit(Type.REGISTERED, leaseId, result.revision(), "", config.ttl());
      starting = false;
      started.complete(null);
      schedule(this::keepalive, firstKeepaliveDelay());
      if (closeRequested || drainRequested) {
        beginDrain();
      }
    } catch (IoException e) {
      if (e.failure().refusal()) {
        revokeAttemptLease();
        abandon(refused(e));
        return;
      }
      if (nanoTime.getAsLong() - startDeadlineNanos > 0) {
        abandon(new RegistryUnavailableException("etcd at " + endpoints + " did not answer within "
            + config.startTimeout().toMillis() + " ms (" + e.getMessage() + "): check that etcd runs there and"
            + " that EtcdConfig's endpoints name it, or raise RegistrarConfig's startTimeout", e));
        return;
      }
      if (e.failure() == Failure.UNAVAILABLE) {
        io.connectionFailed();
      }
      cancelPending = timer.schedule(this::attemptStart, backoff.delay(startAttempts++));
    } catch (RuntimeException e) { // a duplicate, or a bug: the start fails with it
      abandon(e);
    }
  }

  /** The exception a refused first registration fails with: access refusals keep their own code. */
  private MusterException refused(IoException e) {
    String message = "etcd at " + endpoints + " refused to register " + key + ": " + e.getMessage();
    return switch (e.failure()) {
      case DENIED -> new AccessDeniedException(ErrorCode.PERMISSION_DENIED, message, e);
      case UNAUTHENTICATED -> new AccessDeniedException(ErrorCode.AUTHENTICATION_FAILED, message, e);
      default -> new RegistryUnavailableException(message, e);
    };
  }

  /** The first registration failed: nothing to keep alive or revoke. */
  private void abandon(RuntimeException why) {
    starting = false;
    state = RegistrationState.CLOSED;
    drained.complete(null);
    closed.complete(null); // first: the adapter releases its thread and hook before the caller sees the failure
    started.completeExceptionally(why);
  }

  /**
   * Puts the key if absent under the attempt's lease: the one an earlier try of this attempt took, renewed, or else
   * a new one (granted ahead only when {@code first}). Returns the put's result, or throws {@link
   * DuplicateInstanceException} when someone else holds the key (after revoking the attempt's lease).
   */
  private PutResult putUnderAttemptLease(boolean first) {
    Lease lease = attemptLease == 0 ? null : renewAttemptLease();
    if (lease == null) {
      lease = first ? io.leaseForStart(config.ttl()) : new Lease(io.grant(config.ttl()), 0, false);
      attemptLease = lease.id();
      grantedAtNanos = nanoTime.getAsLong() - lease.ageNanos();
    }
    PutResult result;
    try {
      result = io.putIfAbsent(instance, lease.id());
    } catch (IoException e) {
      if (!lease.ahead() || e.failure() != Failure.LEASE_NOT_FOUND) {
        throw e;
      }
      // etcd no longer knows the lease granted ahead (revoked by hand, or a cluster restored from a snapshot)
      log.debug("lease {} granted ahead is gone ({}); granting a new one", Long.toHexString(lease.id()),
          e.getMessage());
      attemptLease = 0;
      return putUnderAttemptLease(false);
    }
    if (result.created() || result.holderLease() == attemptLease) { // or an earlier try's put applied, its answer lost
      valuePutAtNanos = nanoTime.getAsLong();
      return new PutResult(true, result.revision(), attemptLease);
    }
    Duration remaining = remainingOrZero(result.holderLease());
    revokeAttemptLease();
    throw new DuplicateInstanceException(key, result.holderLease(), remaining);
  }

  /**
   * Renews the lease an earlier try of this attempt took, so that a key its applied put wrote outlives the retries;
   * null when etcd no longer knows it (that key went with it). Unreachable: throws, and the lease is kept for the
   * next try.
   */
  private Lease renewAttemptLease() {
    long sent = nanoTime.getAsLong();
    long ttl;
    try {
      ttl = io.keepAlive(attemptLease);
    } catch (IoException e) {
      if (e.failure() != Failure.LEASE_NOT_FOUND) {
        throw e;
      }
      ttl = 0;
    }
    if (ttl <= 0) {
      log.debug("lease {} of an earlier try is gone; granting a new one", Long.toHexString(attemptLease));
      attemptLease = 0;
      return null;
    }
    grantedAtNanos = sent;
    return new Lease(attemptLease, 0, false);
  }

  private Duration remainingOrZero(long lease) {
    try {
      return io.remaining(lease).orElse(Duration.ZERO);
    } catch (IoException e) {
      return Duration.ZERO;
    }
  }

  /** Revokes the attempt's lease, if it took one: the attempt ends without a registration. */
  private void revokeAttemptLease() {
    if (attemptLease == 0) {
      return;
    }
    try {
      io.revoke(attemptLease);
    } catch (IoException e) {
      log.debug("could not revoke unused lease {}: {}", Long.toHexString(attemptLease), e.getMessage());
    }
    attemptLease = 0;
  }

  /**
   * One keepalive interval after the grant. On a loaded machine the put can come seconds after the grant; timing
   * the first keepalive from the put would let a short lease expire before it is ever renewed.
   */
  private Duration firstKeepaliveDelay() {
    long sinceGrant = nanoTime.getAsLong() - grantedAtNanos;
    return Duration.ofNanos(Math.max(0, config.keepaliveInterval().toNanos() - sinceGrant));
  }

  // ---- keepalive, lease loss, unreachable ----------------------------------------------------------

  private void keepalive() {
    if (state == RegistrationState.CLOSED || state == RegistrationState.FAILED) {
      return;
    }
    long lease = leaseId;
    try {
      long sent = nanoTime.getAsLong();
      long ttl = io.keepAlive(lease);
      if (ttl <= 0) {
        onLeaseLost(lease);
        return;
      }
      failures = 0;
      long tookNanos = nanoTime.getAsLong() - sent;
      keepaliveNanos += tookNanos; // the loop is the only writer
      keepalives++;
      if (controls.reportKeepalives() || controls.keepaliveObserver() != RegistrarControls.KeepaliveObserver.NONE) {
        Duration took = Duration.ofNanos(tookNanos);
        observe(lease, Duration.ofSeconds(ttl), took); // the scale bench's keepalive latency; before the event
        if (controls.reportKeepalives()) {
          emit(Type.KEEPALIVE, lease, 0, "ttl " + ttl + "s; answered in " + took.toNanos() / 1_000 + " us",
              Duration.ofSeconds(ttl));
        }
      }
      if (state == RegistrationState.UNREACHABLE) {
        state = RegistrationState.ACTIVE;
        emit(Type.RECONNECTED, lease, 0, "the same lease continues (ttl " + ttl + "s)", Duration.ofSeconds(ttl));
      }
      signAgainIfDue();
      schedule(this::keepalive, config.keepaliveInterval());
    } catch (IoException e) {
      if (e.failure() == Failure.LEASE_NOT_FOUND) {
        onLeaseLost(lease);
      } else {
        onUnreachable(e, this::keepalive);
      }
    }
  }

  private void onLeaseLost(long lease) {
    failures = 0;
    if (state == RegistrationState.DRAINING || state == RegistrationState.DRAINED) {
      log.info("lease {} of {} ended while draining", Long.toHexString(lease), key);
      return; // nothing to renew; the close still revokes (a no-op) and ends
    }
    if (state != RegistrationState.LEASE_LOST) {
      state = RegistrationState.LEASE_LOST;
      leaseLosses++;
      emit(Type.LEASE_LOST, lease, 0, controls.reregister() ? "re-registering with a new lease"
          : "re-registration is off: renewing the dead lease id");
    }
    if (controls.reregister()) {
      reregister();
    } else {
      schedule(this::keepalive, config.keepaliveInterval());
    }
  }

  private void reregister() {
    if (state != RegistrationState.LEASE_LOST) {
      return;
    }
    try {
      PutResult result = putUnderAttemptLease(false);
      leaseId = result.holderLease();
      attemptLease = 0;
      failures = 0;
      state = RegistrationState.ACTIVE;
      reregistrations++;
      idTakenSinceNanos = 0;
      emit(Type.REREGISTERED, leaseId, result.revision(), "", config.ttl());
      schedule(this::keepalive, firstKeepaliveDelay());
    } catch (DuplicateInstanceException e) {
      idTaken(e);
    } catch (IoException e) {
      if (e.failure().refusal()) {
        revokeAttemptLease();
        fail(e.getMessage());
      } else {
        onUnreachable(e, this::reregister);
      }
    }
  }

  /**
   * After a lost lease our id is held by another lease: another provider took it, or it is this provider's own earlier
   * key, kept by a lease etcd has not expired yet (a blip where the keepalive's answer was lost). Either may end by
   * itself, so the re-registration is retried, each time once the holder's lease could have expired, until it has
   * been held for twice the TTL and 5 s more; then FAILED (issue 35: it was FAILED at once).
   */
  private void idTaken(DuplicateInstanceException e) {
    long now = nanoTime.getAsLong();
    long giveUpAfter = config.ttl().multipliedBy(2).plusSeconds(5).toNanos();
    if (idTakenSinceNanos == 0) {
      idTakenSinceNanos = now;
      log.warn("re-registering {}: {}; retrying for {} s in case it ends", key, e.getMessage(),
          giveUpAfter / 1_000_000_000L);
    }
    long left = giveUpAfter - (now - idTakenSinceNanos);
    if (left <= 0) {
      fail(e.getMessage() + " (still held after " + giveUpAfter / 1_000_000_000L + " s of retries)");
      return;
    }
    long holderLeft = e.holderTtl().isNegative() ? 0 : e.holderTtl().toNanos();
    schedule(this::reregister, Duration.ofNanos(Math.min(left, holderLeft + Duration.ofMillis(100).toNanos())));
  }

  private void onUnreachable(IoException e, Runnable retry) {
    failures++;
    if (state == RegistrationState.ACTIVE) {
      state = RegistrationState.UNREACHABLE;
      emit(Type.UNREACHABLE, leaseId, 0, e.getMessage());
    }
    if (config.maxFailures() > 0 && failures >= config.maxFailures()) {
      fail("gave up after " + failures + " consecutive failed calls to etcd at " + endpoints + " (last: "
          + e.getMessage() + ")");
      return;
    }
    if (e.failure() == Failure.UNAVAILABLE) {
      io.connectionFailed();
    }
    schedule(retry, backoff.delay(failures - 1));
  }

  private void fail(String why) {
    cancelPending();
    state = RegistrationState.FAILED;
    emit(Type.FAILED, leaseId, 0, why);
  }

  // ---- update --------------------------------------------------------------------------------------

  private void applyUpdate(UnaryOperator<Instance> change, CompletableFuture<Instance> result) {
    if (starting || !started.isDone()) { // no caller holds a registration yet; only a bug gets here
      result.completeExceptionally(new IllegalStateException("registration " + key + " has not started"));
      return;
    }
    Instance current = instance;
    Instance next = change.apply(current);
    if (next == null || !next.key().equals(current.key())) {
      result.completeExceptionally(new InvalidInputException("instance", next == null ? "null" : next.key().path(),
          "an update may change weight, state, zone, tags and metadata, not namespace, service, version or id ("
              + current.key().path() + ")"));
      return;
    }
    if (state == RegistrationState.CLOSED || state == RegistrationState.FAILED
        || state == RegistrationState.DRAINING || state == RegistrationState.DRAINED) {
      result.completeExceptionally(new IllegalStateException("registration " + key + " is " + state
          + ": it can no longer be updated"));
      return;
    }
    instance = next; // also what a re-registration writes, should the lease turn out to be gone
    if (state == RegistrationState.LEASE_LOST) {
      result.complete(next); // the pending re-registration writes it
      return;
    }
    try {
      long revision = io.put(next, leaseId);
      valuePutAtNanos = nanoTime.getAsLong();
      emit(Type.UPDATED, leaseId, revision, "");
      result.complete(next);
    } catch (IoException e) {
      if (e.failure() == Failure.LEASE_NOT_FOUND) {
        result.complete(next);
        onLeaseLost(leaseId);
      } else {
        instance = current;
        result.completeExceptionally(new RegistryUnavailableException("could not update " + key + ": "
            + e.getMessage() + "; try again", e));
      }
    }
  }

  // ---- close ---------------------------------------------------------------------------------------

  /** Called for a close (closeRequested) or a drain in any state but DRAINING and DRAINED. */
  private void beginDrain() {
    if (state == RegistrationState.CLOSED) {
      drained.complete(null);
      closed.complete(null);
      return;
    }
    if (state == RegistrationState.FAILED) {
      drained.complete(null);
      if (closeRequested) {
        cancelPending();
        failedBeforeClose = true;
        finishClose();
      }
      return;
    }
    cancelPending();
    boolean leaseAlive = state != RegistrationState.LEASE_LOST;
    state = RegistrationState.DRAINING;
    drains++;
    long revision = 0;
    String detail = "drain " + config.drain().toMillis() + " ms";
    // With no drain time nobody could act on DRAINING before the revoke: publishing it would only cost one more
    // raft commit and one more event at every consumer (the bench's close→gone row measured it at ~2x the floor).
    if (config.drain().isZero()) {
      detail += "; DRAINING not published";
    } else if (leaseAlive) {
      Instance draining = instance.state(InstanceState.DRAINING);
      try {
        revision = io.put(draining, leaseId);
        valuePutAtNanos = nanoTime.getAsLong();
        instance = draining;
      } catch (RuntimeException e) { // etcd unreachable, or the JVM shutting down: revoke regardless
        detail += "; could not publish DRAINING: " + e.getMessage();
      }
    }
    emit(Type.DRAINING, leaseId, revision, detail);
    if (config.drain().isZero()) {
      drainElapsed();
    } else {
      schedule(this::keepaliveWhileDraining, config.keepaliveInterval());
      cancelDrain = timer.schedule(guarded(this::drainElapsed), config.drain());
    }
  }

  /** The drain period has ended: revoke if a close is waiting, else stay registered (DRAINED) until one comes. */
  private void drainElapsed() {
    if (closeRequested) {
      drained.complete(null);
      finishClose();
      return;
    }
    state = RegistrationState.DRAINED;
    emit(Type.DRAINED, leaseId, 0, "drain " + config.drain().toMillis() + " ms ended; the lease is kept alive until"
        + " close()");
    drained.complete(null); // after the state: a stage chained on it sees DRAINED
  }

  private void keepaliveWhileDraining() {
    if (state != RegistrationState.DRAINING && state != RegistrationState.DRAINED) {
      return;
    }
    try {
      if (io.keepAlive(leaseId) > 0) {
        signAgainIfDue();
      }
    } catch (IoException e) {
      log.debug("keepalive while draining {} failed: {}", key, e.getMessage());
    }
    schedule(this::keepaliveWhileDraining, config.keepaliveInterval());
  }

  /**
   * With a signing key, puts the current value again (the I/O signs it with the next sequence and a new notAfter)
   * once half of {@link RegistrarConfig#signatureValidity()} has passed since the last put, so consumers never see
   * a live registration's signature expire. Called after a keepalive etcd answered; a put that fails is tried again
   * at the next keepalive (half the validity is left to do it). Not an update: no event, the state is unchanged.
   */
  private void signAgainIfDue() {
    if (config.signingKey() == null
        || nanoTime.getAsLong() - valuePutAtNanos < config.signatureValidity().toNanos() / 2) {
      return;
    }
    try {
      io.put(instance, leaseId);
      valuePutAtNanos = nanoTime.getAsLong();
    } catch (IoException e) {
      log.debug("could not sign {} again (tried again at the next keepalive): {}", key, e.getMessage());
    }
  }

  /**
   * Revokes the lease, retrying while etcd is unreachable for up to twice the request timeout: a blip (an etcd
   * restart, a cut connection) must not leave the key behind, where etcd would keep it for the TTL and extend it
   * again at every leader election.
   */
  private void finishClose() {
    cancelPending();
    cancelDrain.run();
    revoke(leaseId, 0, nanoTime.getAsLong() + config.requestTimeout().multipliedBy(2).toNanos());
  }

  /** One revoke attempt; a retry is scheduled on the loop (with the backoff), never slept for. */
  private void revoke(long lease, int attempt, long giveUpAtNanos) {
    try {
      long revision = io.revoke(lease);
      emit(Type.REVOKED, lease, revision, attempt == 0 ? "" : "after " + attempt + " failed attempt(s)");
    } catch (IoException e) {
      if (e.failure() == Failure.UNAVAILABLE && nanoTime.getAsLong() - giveUpAtNanos < 0) {
        io.connectionFailed();
        schedule(() -> revoke(lease, attempt + 1, giveUpAtNanos), backoff.delay(attempt));
        return;
      }
      reportRevokeFailure(lease, e);
    }
    state = RegistrationState.CLOSED;
    drained.complete(null);
    closed.complete(null);
  }

  private void reportRevokeFailure(long lease, IoException e) {
    if (e.failure() == Failure.LEASE_NOT_FOUND) {
      emit(Type.REVOKED, lease, 0, "the lease had already ended");
    } else if (failedBeforeClose) {
      log.info("could not revoke lease {} of failed registration {}: {}", Long.toHexString(lease), key,
          e.getMessage()); // FAILED was already reported once
    } else {
      leftBehind = e.getMessage();
      emit(Type.FAILED, lease, 0, "could not revoke the lease (" + e.getMessage() + "); the key expires with it"
          + " within " + config.ttl().toSeconds() + "s");
    }
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  private void schedule(Runnable step, Duration delay) {
    cancelPending();
    cancelPending = timer.schedule(guarded(step), delay);
  }

  /** A step that throws unexpectedly (a bug, or an Io that broke its contract) must not end the loop's work. */
  private Runnable guarded(Runnable step) {
    return () -> {
      try {
        step.run();
      } catch (RuntimeException e) {
        log.error("registrar step for {} failed unexpectedly; retrying in {}", key, config.keepaliveInterval(), e);
        if (state != RegistrationState.CLOSED && state != RegistrationState.FAILED) {
          schedule(this::keepalive, config.keepaliveInterval());
        }
      }
    };
  }

  private void cancelPending() {
    cancelPending.run();
    cancelPending = () -> { };
  }

  private void emit(Type type, long lease, long revision, String detail) {
    emit(type, lease, revision, detail, Duration.ZERO);
  }

  private void emit(Type type, long lease, long revision, String detail, Duration ttl) {
    RegistrationEvent event = new RegistrationEvent(type, clock.instant(), instance.id(), lease, revision, detail,
        ttl);
    log.debug("{}", event);
    try {
      listener.onEvent(event);
    } catch (RuntimeException e) {
      log.warn("registration listener threw on {}; ignored", type, e);
    }
  }

  private void observe(long lease, Duration ttl, Duration answeredIn) {
    try {
      controls.keepaliveObserver().answered(instance.id(), lease, ttl, answeredIn);
    } catch (RuntimeException e) {
      log.warn("keepalive observer threw; ignored", e);
    }
  }
}
