package dev.muster.etcd.internal;

import dev.muster.etcd.internal.EtcdOps.EtcdCallException;
import dev.muster.internal.DeliveryPool;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.RegistryLayout;
import dev.muster.registry.internal.LiveRegistration;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.registry.internal.RegistrarDriver;
import dev.muster.registry.internal.RegistrarDriver.Failure;
import dev.muster.registry.internal.RegistrarDriver.IoException;
import dev.muster.registry.internal.RegistrarDriver.Lease;
import dev.muster.registry.internal.RegistrarDriver.PutResult;
import io.etcd.jetcd.Client;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.random.RandomGenerator;

/**
 * One registration's I/O on etcd: {@link RegistrarDriver.Io} done with jetcd, each call a blocking call on the
 * registration's loop, bounded by the request timeout, and run as a managed blocker when the loop is on a pool thread
 * ({@link DeliveryPool#blocking}). A first registration may take a lease the registry granted ahead ({@link
 * LeasePool}); keepalives go on the connection's one {@link KeepAliveStream} per client; with {@code
 * RegistrarConfig.sharedLease} the driver talks to a {@link SharedLeases} I/O that wraps this one. Each call that
 * could not reach etcd is reported to the {@link EtcdConnection}, which decides any replacement. The registration
 * itself, its loop, timers, shutdown hook and close, is muster-core's {@link LiveRegistration}; {@link #register}
 * puts the two together.
 *
 * <p>Not thread-safe: the driver calls it on the registration's loop only, one call at a time.
 */
public final class EtcdRegistrarIo implements RegistrarDriver.Io, SharedLeases.KeyOps {
  private final EtcdConnection connection;
  private final LeasePool leasesAhead;
  private final String key;
  private final String servicePrefix;
  private final RegistrarConfig config;
  /** Signatures' time: their sequence and notAfter. */
  private final Clock clock;
  /** The client of the last call: the one a failure report is about. */
  private Client used;
  /** When that call started ({@link System#nanoTime()}): any success on {@code used} after it outvotes it. */
  private long attemptStartedNanos;
  /** Whether etcd answered the last call (even with a refusal or "no leader"): then it is not the connection's. */
  private boolean answered;
  /** How the last call failed, for the report (the connection's replacement line names it). */
  private String lastFailure = "";
  /** A first registration's lease was asked for: once its put ends, the pool grants the next one ahead. */
  private boolean refillAfterPut;
  /** The sequence of the last value signed (see {@link #value}). */
  private long lastSeq;

  private EtcdRegistrarIo(EtcdConnection connection, LeasePool leasesAhead, String key, String servicePrefix,
      RegistrarConfig config, Clock clock) {
    this.clock = clock;
    this.connection = connection;
    this.leasesAhead = leasesAhead;
    this.key = key;
    this.servicePrefix = servicePrefix;
    this.config = config;
  }

  /**
   * Registers {@code instance} on etcd and starts its keepalives: a {@link LiveRegistration} whose I/O is an {@code
   * EtcdRegistrarIo} (wrapped by the registry's {@link SharedLeases} when {@code config.sharedLease()}), under the
   * key the connection's layout gives it. Blocks as {@link LiveRegistration#register} does; {@code timers} is the
   * registry's timer thread.
   */
  public static LiveRegistration register(EtcdConnection connection, LeasePool leasesAhead,
      ScheduledExecutorService timers, Instance instance, RegistrarConfig config, RegistrarControls controls,
      RegistrationListener listener, Clock clock, LongSupplier nanoTime, RandomGenerator random) {
    Objects.requireNonNull(instance, "instance");
    RegistryLayout layout = connection.config().layout();
    String key = layout.instanceKey(instance);
    EtcdRegistrarIo own = new EtcdRegistrarIo(connection, leasesAhead, key,
        layout.servicePrefix(instance.namespace(), instance.service()), config, clock);
    RegistrarDriver.Io io = config.sharedLease()
        ? leasesAhead.shared().io(key, config.keepaliveInterval(), own, own) : own;
    return LiveRegistration.register(key, connection.config().endpoints().toString(), instance, config, controls, io,
        timers, listener, clock, nanoTime, random);
  }

  /** One call on the current client; an answer, even a refusal, is reported as a success of the connection. */
  private <T> T call(Function<Client, T> op) {
    return DeliveryPool.blocking(() -> call(connection.client(), op));
  }

  /** Not itself a managed blocker: called inside one. */
  private <T> T call(Client c, Function<Client, T> op) {
    used = c;
    attemptStartedNanos = System.nanoTime();
    answered = false;
    try {
      T result = op.apply(c);
      connection.succeeded(c);
      return result;
    } catch (EtcdCallException e) {
      // etcd answered: a refusal, or "no leader" during an election (unavailable for the driver, which retries,
      // but nothing a new connection would change)
      answered = e.kind() != EtcdErrors.Kind.UNAVAILABLE || EtcdErrors.isNoLeader(e);
      lastFailure = e.getMessage();
      if (answered) {
        connection.succeeded(c);
      }
      throw e;
    }
  }

  @Override
  public long grant(Duration ttl) {
    try {
      return call(c -> EtcdOps.grant(c, ttl, config.requestTimeout()));
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  /** The pool's fresh lease when there is one and the config allows it, else a grant now. */
  @Override
  public Lease leaseForStart(Duration ttl) {
    if (!config.leaseAhead()) {
      return RegistrarDriver.Io.super.leaseForStart(ttl);
    }
    refillAfterPut = true;
    return leasesAhead.take(ttl).orElseGet(() -> RegistrarDriver.Io.super.leaseForStart(ttl));
  }

  /**
   * The pool's refill is handed to a delivery pool thread once the put is done, so the next lease's grant neither
   * competes with this put for etcd's commit nor delays {@code register()}'s return by the cost of starting the
   * call. Not to this registration's loop: the refill would hold it just after {@code register()} returns, and a
   * {@code close()} right then would find it busy and wait for a pool thread instead of running on its caller
   * (RegisterProbe's close() did). {@link LeasePool} is thread-safe and its grant asynchronous.
   */
  @Override
  public PutResult putIfAbsent(Instance instance, long lease) {
    try {
      EtcdOps.PutIfAbsent r = call(c -> EtcdOps.putIfAbsent(c, key, value(instance, lease), lease,
          config.requestTimeout()));
      return new PutResult(r.created(), r.revision(), r.holderLease());
    } catch (EtcdCallException e) {
      throw mapped(e);
    } finally {
      if (refillAfterPut) {
        refillAfterPut = false;
        Duration ttl = config.ttl();
        DeliveryPool.execute(() -> leasesAhead.refill(ttl));
      }
    }
  }

  @Override
  public long put(Instance instance, long lease) {
    try {
      return call(c -> EtcdOps.put(c, key, value(instance, lease), lease, config.requestTimeout()));
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  /** On the current client's keepalive stream, shared by the registry's registrations: one request per keepalive. */
  @Override
  public long keepAlive(long lease) {
    try {
      return DeliveryPool.blocking(() -> {
        KeepAliveStream stream = connection.keepAliveStream();
        return call(stream.client(), c -> stream.keepAlive(lease, config.requestTimeout()));
      });
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  /** Anything a revoke throws is classified (the JVM may be shutting down the client under it). */
  @Override
  public long revoke(long lease) {
    try {
      return call(c -> EtcdOps.revoke(c, lease, config.requestTimeout()));
    } catch (RuntimeException re) {
      throw mapped(re instanceof EtcdCallException ce ? ce
          : new EtcdCallException("revoke lease " + Long.toHexString(lease), re));
    }
  }

  @Override
  public Optional<Duration> remaining(long lease) {
    try {
      return call(c -> EtcdOps.remaining(c, lease, config.requestTimeout()));
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  @Override
  public long deleteIf(String key, long modRevision) {
    try {
      return call(c -> EtcdOps.deleteIf(c, key, modRevision, config.requestTimeout()));
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  @Override
  public OptionalLong modRevision(String key) {
    try {
      return call(c -> EtcdOps.modRevision(c, key, config.requestTimeout()));
    } catch (EtcdCallException e) {
      throw mapped(e);
    }
  }

  /** The connection decides: a success on {@code used} since this call began outvotes it. */
  @Override
  public void connectionFailed() {
    if (used != null && !answered) {
      Client c = used;
      long startedAt = attemptStartedNanos;
      String what = "registration " + key + ": " + lastFailure;
      DeliveryPool.blocking(() -> connection.failed(c, startedAt, what)); // may probe TCP
    }
  }

  /**
   * Signed here, at each put, because only now is the lease known (a re-registration puts under a new one). The
   * sequence is the wall clock in microseconds, or one more than the last when the clock has not moved past it: it
   * only grows within this process, and across a restart unless the clock went back further than the time between
   * the last put before it and the first after. Called on the registration's loop only.
   */
  private byte[] value(Instance instance, long lease) {
    if (config.signingKey() == null) {
      return InstanceCodec.encode(instance);
    }
    Instant now = clock.instant();
    lastSeq = Math.max(lastSeq + 1, now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000);
    return InstanceCodec.encodeSigned(instance, key, lease, lastSeq, now.plus(config.signatureValidity()),
        config.signingKey(), config.signV1Too());
  }

  private IoException mapped(EtcdCallException e) {
    return switch (e.kind()) {
      case LEASE_NOT_FOUND -> new IoException(Failure.LEASE_NOT_FOUND, e.getMessage(), e);
      case UNAVAILABLE -> new IoException(Failure.UNAVAILABLE, e.getMessage(), e);
      case DENIED -> new IoException(Failure.DENIED, EtcdErrors.refusal(connection.config(), e.kind(),
          "write " + key, "readwrite on " + key + " or on its service prefix " + servicePrefix, e.getCause()), e);
      case UNAUTHENTICATED -> new IoException(Failure.UNAUTHENTICATED, EtcdErrors.refusal(connection.config(),
          e.kind(), "", "", e.getCause()), e);
      case OTHER -> new IoException(Failure.REFUSED, e.getMessage(), e);
    };
  }
}
