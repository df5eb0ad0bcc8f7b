package dev.muster.etcd;

import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSource;
import dev.muster.cache.internal.CacheDriver;
import dev.muster.etcd.internal.EtcdConnection;
import dev.muster.etcd.internal.EtcdEndpointCache;
import dev.muster.etcd.internal.EtcdListings;
import dev.muster.etcd.internal.EtcdRegistrar;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Muster's entry point on etcd: one connection (a jetcd client that Muster replaces when it must reconnect),
 * shared by every registration made through it.
 *
 * <pre>{@code
 * try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of("http://127.0.0.1:2379"))) {
 *   Registration r = registry.register(Instance.of("orders", "10.0.0.7", 8080).zone("a").weight(50));
 *   r.update(i -> i.weight(80));
 *   ...
 *   r.close(); // DRAINING, drain period, revoke
 * }
 * }</pre>
 *
 * <p>One connection, shared: every cache and registration made through a registry uses the same jetcd client.
 * The client is replaced (reconnect with Muster's backoff, not grpc-java's) only when the connection itself is in
 * doubt — etcd unreachable, a stream that ended or stalled (half-open) — and a client that another cache or
 * registration already replaced is not replaced again. A watch or range that etcd refuses (say, permission denied
 * for one service) is retried by its own cache and never resets the connection, so it cannot break the watches and
 * keepalives of the others. {@link #reconnects()} counts the replacements.
 *
 * <p>Thread-safe. Closing the registry closes every registration still open (drain, revoke), then the
 * connection.
 */
public final class EtcdRegistry implements AutoCloseable, EndpointSource {
  static {
    NegativeControls.install((registry, config, listeners) ->
        registry.watch(config, CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL, listeners));
  }

  private final EtcdConnection connection;
  private final Clock clock;
  private final List<Registration> registrations = new CopyOnWriteArrayList<>();
  private final List<EndpointCache> caches = new CopyOnWriteArrayList<>();

  private EtcdRegistry(EtcdConnection connection, Clock clock) {
    this.connection = connection;
    this.clock = clock;
  }

  /** Connects lazily: nothing is sent to etcd until the first call. */
  public static EtcdRegistry connect(EtcdConfig config) {
    return connect(config, Clock.systemUTC());
  }

  /** As {@link #connect(EtcdConfig)}, with the clock used for event timestamps. */
  public static EtcdRegistry connect(EtcdConfig config, Clock clock) {
    return new EtcdRegistry(new EtcdConnection(Objects.requireNonNull(config, "config")), clock);
  }

  public EtcdConfig config() {
    return connection.config();
  }

  /** {@link #register(Instance, RegistrarConfig, RegistrationListener)} with the default configuration. */
  public Registration register(Instance instance) {
    return register(instance, RegistrarConfig.defaults(), RegistrationListener.NONE);
  }

  /**
   * Registers {@code instance} under a new lease and keeps it alive until the registration is closed.
   * Blocks until the key is written.
   *
   * @throws dev.muster.DuplicateInstanceException the key is held by another lease (nothing was overwritten)
   * @throws RegistryUnavailableException etcd did not answer within {@code config.startTimeout()}
   */
  public Registration register(Instance instance, RegistrarConfig config, RegistrationListener listener) {
    Registration r = EtcdRegistrar.register(connection, connection.config().layout(), instance, config,
        listener == null ? RegistrationListener.NONE : listener, clock, new SecureRandom());
    registrations.add(r);
    return r;
  }

  /**
   * The instances of one service ({@code service} non-null) or of a whole namespace ({@code service} null), read
   * from etcd at one revision.
   */
  public RegistryListing list(String namespace, String service) {
    return EtcdListings.list(connection, namespace, service);
  }

  /**
   * Starts an endpoint cache for {@code config.service()}: it ranges the service's prefix, then watches it, and
   * keeps its set equal to etcd's (SPEC §4). Returns at once; {@link EndpointCache#awaitReady(java.time.Duration)}
   * waits for the first set. Closing the registry closes the cache.
   */
  @Override
  public EndpointCache watch(CacheConfig config, EndpointListener... listeners) {
    return watch(config, CacheDriver.ResumeRule.AT_CHECKPOINT, List.of(listeners));
  }

  private EndpointCache watch(CacheConfig config, CacheDriver.ResumeRule rule, List<EndpointListener> listeners) {
    EndpointCache cache = EtcdEndpointCache.start(connection, Objects.requireNonNull(config, "config"), rule, clock,
        listeners);
    caches.add(cache);
    return cache;
  }

  /** How many times the etcd client was replaced to reconnect (for diagnostics and tests). */
  public long reconnects() {
    return connection.resets();
  }

  @Override
  public void close() {
    MusterException failure = null;
    for (Registration r : registrations) {
      try {
        r.close();
      } catch (MusterException e) {
        failure = e;
      }
    }
    registrations.clear();
    caches.forEach(EndpointCache::close);
    caches.clear();
    connection.close();
    if (failure != null) {
      throw failure;
    }
  }
}
