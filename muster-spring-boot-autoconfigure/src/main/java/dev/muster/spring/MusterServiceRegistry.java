package dev.muster.spring;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import dev.muster.sign.SigningKey;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;

/**
 * Spring Cloud's {@link ServiceRegistry} on Muster's registrar: {@link #register} takes a lease and puts the
 * instance (and keeps it alive, re-registering after a lost lease), {@link #drain} is the registration's drain
 * ({@code DRAINING} published, the lease kept alive, a future that completes when the drain period has passed),
 * {@link #deregister} revokes the lease. {@link #setStatus} takes {@code UP},
 * {@code STARTING} or {@code DRAINING}.
 *
 * <p>The registrar runs with {@code muster.instance.drain} and no shutdown hook: Spring's lifecycle decides the order
 * ({@link Registration#drain()}, the web server's graceful shutdown, then the revoke; see
 * {@link MusterDrainLifecycle}). Nothing here sleeps: the drain is the registration's timer. Thread-safe; one
 * registration at a time: {@link #register} may run on its own thread while the application stops, and a
 * registration that completes after {@link #deregister} is revoked at once. No lock is held across etcd calls.
 */
public final class MusterServiceRegistry implements ServiceRegistry<MusterRegistration> {
  private static final Logger log = LoggerFactory.getLogger(MusterServiceRegistry.class);

  private final EtcdRegistry registry;
  private final MusterProperties.Instance settings;
  private final Duration requestTimeout;
  private final io.micrometer.core.instrument.MeterRegistry meters; // null without Micrometer
  private volatile dev.muster.metrics.MusterMeters.Binding bound; // the registration's meters, null when none
  private volatile Registration registration;
  private volatile RuntimeException failure; // why the last register() failed, or null
  private volatile boolean deregistered; // the application is stopping: a registration that completes now is closed

  public MusterServiceRegistry(EtcdRegistry registry, MusterProperties properties) {
    this(registry, properties, null);
  }

  /** As above, binding the registration's meters ({@code muster.registration.*}) to {@code meters} (null: none). */
  public MusterServiceRegistry(EtcdRegistry registry, MusterProperties properties,
      io.micrometer.core.instrument.MeterRegistry meters) {
    this.meters = meters;
    this.registry = Objects.requireNonNull(registry, "registry");
    this.settings = properties.instance();
    this.requestTimeout = properties.requestTimeout();
  }

  @Override
  public void register(MusterRegistration r) {
    if (r.instance() == null) {
      throw new IllegalStateException(r + " has no port yet: register it after the web server started");
    }
    RegistrarConfig.Builder config = RegistrarConfig.defaults().toBuilder().ttl(settings.ttl())
        .keepaliveInterval(settings.keepalive()).drain(settings.drain()).shutdownHook(false);
    if (settings.signKey() != null) {
      config.signingKey(SigningKey.read(settings.signKey()));
    }
    Registration done = registry.register(r.instance(), config.build(), event -> log.info("muster: {}", event));
    boolean stopping;
    synchronized (this) {
      stopping = deregistered; // stopped while registering (a registration on its own thread)
      if (!stopping) {
        registration = done;
        failure = null;
      }
    }
    if (stopping) {
      done.close();
      return;
    }
    log.info("muster: registered {} at {}:{} (lease {})", r.instance().key().path(), r.getHost(), r.getPort(),
        Long.toHexString(registration.leaseId()));
    if (meters != null) {
      bound = dev.muster.metrics.MusterMeters.registration(meters, done);
    }
  }

  /**
   * Publishes {@code DRAINING} (consumers' caches see it and their balancers stop picking this instance) and keeps
   * the lease alive; the future completes when {@code muster.instance.drain} has passed (at once when nothing is
   * registered or the drain is 0). {@link #deregister} then revokes at once. Never fails.
   */
  public CompletableFuture<Void> drain() {
    Registration r = registration;
    if (r == null) {
      return CompletableFuture.completedFuture(null);
    }
    if (!settings.drain().isZero()) {
      log.info("muster: draining {} for {} ms before the web server stops taking requests",
          r.instance().key().path(), settings.drain().toMillis());
    }
    return r.drain();
  }

  @Override
  public void deregister(MusterRegistration r) {
    Registration current;
    synchronized (this) {
      deregistered = true;
      current = registration;
      registration = null;
    }
    dev.muster.metrics.MusterMeters.Binding b = bound;
    bound = null;
    if (b != null) {
      b.close();
    }
    if (current != null) {
      current.close(); // revokes the lease: the key goes at once
      log.info("muster: deregistered {} (lease revoked)", r.instance() == null ? r : r.instance().key().path());
    }
  }

  @Override
  public void close() {
    // The EtcdRegistry bean is closed by the application context.
  }

  /** {@code UP}, {@code STARTING} (out of rotation, still registered) or {@code DRAINING} (case-insensitive). */
  @Override
  public void setStatus(MusterRegistration r, String status) {
    Registration current = registration;
    if (current == null) {
      throw new IllegalStateException(r + " is not registered: no status to set");
    }
    InstanceState state;
    try {
      state = InstanceState.valueOf(status.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("status " + status + " is not a Muster state: use UP, STARTING or"
          + " DRAINING", e);
    }
    update(current, state);
  }

  /** The instance's state ({@code UP}, {@code DRAINING}), or the registration's when it is not active. */
  @Override
  @SuppressWarnings("unchecked")
  public <T> T getStatus(MusterRegistration r) {
    Registration current = registration;
    if (current == null) {
      return (T) "NOT_REGISTERED";
    }
    return (T) (current.state() == RegistrationState.ACTIVE ? current.instance().state().name()
        : current.state().name());
  }

  /** Records why registering failed (the health indicator reports it). */
  void failed(RuntimeException why) {
    failure = why;
  }

  /** Why the last registration attempt failed, or null. */
  public RuntimeException failure() {
    return failure;
  }

  /** The registrar's registration, or null when not registered. */
  public Registration registration() {
    return registration;
  }

  private void update(Registration r, InstanceState state) {
    try {
      r.update(i -> i.state(state)).get(requestTimeout.toMillis() * 3, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("could not set " + r.instance().key().path() + " to " + state + ": "
          + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IllegalStateException("setting " + r.instance().key().path() + " to " + state + " timed out", e);
    }
  }
}
