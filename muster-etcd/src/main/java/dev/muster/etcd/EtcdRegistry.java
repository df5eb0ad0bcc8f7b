package dev.muster.etcd;

import dev.muster.RegistryUnavailableException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSource;
import dev.muster.cache.internal.CacheDriver;
import dev.muster.cache.internal.SharedCaches;
import dev.muster.etcd.internal.EtcdCacheIo;
import dev.muster.etcd.internal.EtcdConnection;
import dev.muster.etcd.internal.EtcdListings;
import dev.muster.etcd.internal.EtcdRegistrarIo;
import dev.muster.etcd.internal.LeasePool;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.registry.internal.LiveRegistration;
import dev.muster.registry.internal.RegistrarControls;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * <p>Thread-safe. The registry holds the registrations and caches made through it until they are closed (by
 * their user or by the registry). Closing the registry closes every registration still open at once (they drain
 * in parallel, then each revokes its lease), then the caches, then the connection.
 */
public final class EtcdRegistry implements AutoCloseable, EndpointSource {
  static {
    NegativeControls.install(new NegativeControls.Bridge() {
      @Override
      public EndpointCache watchFromNow(EtcdRegistry registry, CacheConfig config, List<EndpointListener> listeners) {
        return registry.watch(config, CacheDriver.ResumeRule.FROM_NOW_NEGATIVE_CONTROL, null, listeners);
      }

      @Override
      public EndpointCache watchWithoutJitter(EtcdRegistry registry, CacheConfig config,
          List<EndpointListener> listeners) {
        return registry.watch(config, CacheDriver.ResumeRule.AT_CHECKPOINT, NegativeControls.NO_JITTER, listeners);
      }

      @Override
      public EndpointCache watchDroppingRevision(EtcdRegistry registry, CacheConfig config, long revisionNumber,
          List<EndpointListener> listeners) {
        return registry.watch(config, CacheDriver.ResumeRule.AT_CHECKPOINT, null, revisionNumber, listeners);
      }

      @Override
      public Registration register(EtcdRegistry registry, Instance instance, RegistrarConfig config,
          RegistrarControls controls, RegistrationListener listener) {
        return registry.register(instance, config, Objects.requireNonNull(controls, "controls"), listener);
      }
    });
  }

  private final EtcdConnection connection;
  private final LeasePool leasesAhead;
  /** Every registration's timers: one daemon thread, started with the first, that hands due tasks to their loops. */
  private final ScheduledThreadPoolExecutor registrarTimers = LiveRegistration.newTimers();
  private final Clock clock;
  private final List<LiveRegistration> registrations = new CopyOnWriteArrayList<>();
  private final List<EndpointCache> caches = new CopyOnWriteArrayList<>();
  /** The process's one cache per config, for the adapters ({@link #open}); each started by {@link #watch}. */
  private final SharedCaches shared = new SharedCaches(config -> watch(config));

  private EtcdRegistry(EtcdConnection connection, Clock clock) {
    this.connection = connection;
    this.leasesAhead = new LeasePool(connection, System::nanoTime);
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

  /** {@link #register(Instance, RegistrarConfig, RegistrationListener)} without a listener. */
  public Registration register(Instance instance, RegistrarConfig config) {
    return register(instance, config, RegistrationListener.NONE);
  }

  /**
   * Registers {@code instance} under a new lease and keeps it alive until the registration is closed.
   * Blocks until the key is written.
   *
   * @throws dev.muster.DuplicateInstanceException the key is held by another lease (nothing was overwritten)
   * @throws RegistryUnavailableException etcd did not answer within {@code config.startTimeout()}
   */
  public Registration register(Instance instance, RegistrarConfig config, RegistrationListener listener) {
    return register(instance, config, RegistrarControls.PRODUCTION, listener);
  }

  private Registration register(Instance instance, RegistrarConfig config, RegistrarControls controls,
      RegistrationListener listener) {
    Objects.requireNonNull(config, "config");
    // The production ticker: the registrar's timers and deadlines run on the monotonic clock.
    LiveRegistration r = EtcdRegistrarIo.register(connection, leasesAhead, registrarTimers, instance, config,
        controls, listener == null ? RegistrationListener.NONE : listener, clock, System::nanoTime,
        new SecureRandom());
    registrations.add(r);
    r.whenClosed().thenRun(() -> registrations.remove(r)); // a registration closed by its user leaves the list
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
   * The names of the services with at least one key in {@code namespace}, sorted: one keys-only range, so the
   * values are not read or decoded. For DNS-SD browsing and Spring's {@code getServices()}.
   *
   * @throws RegistryUnavailableException when etcd does not answer within the request timeout
   * @throws dev.muster.AccessDeniedException when etcd refuses the user read access to the namespace
   */
  public java.util.SortedSet<String> services(String namespace) {
    return EtcdListings.services(connection, namespace);
  }

  /**
   * The namespaces with at least one key under the layout's root, sorted: one keys-only range of the root (for the
   * console's first page). Same failures as {@link #services(String)}.
   */
  public java.util.SortedSet<String> namespaces() {
    return EtcdListings.namespaces(connection);
  }

  /**
   * Starts an endpoint cache of its own for {@code config.service()}: it ranges the service's prefix, then watches
   * it, and keeps its set equal to etcd's (SPEC §4). Returns at once; {@link EndpointCache#awaitReady(java.time.Duration)}
   * waits for the first set. Closing the registry closes the cache. For the one cache of a service that everything
   * in the process shares, {@link #open}.
   */
  @Override
  public EndpointCache watch(CacheConfig config, EndpointListener... listeners) {
    return watch(config, CacheDriver.ResumeRule.AT_CHECKPOINT, null, List.of(listeners));
  }

  /**
   * A hold on this registry's one cache of {@code config}, shared with every other holder of an equal config (see
   * {@link dev.muster.cache.EndpointSource#open}): the adapters (gRPC, Spring, DNS, the console, {@code MusterClient})
   * open caches here, so a service several of them ask for is watched once. Closing the hold releases it; the last
   * release closes the cache, and closing the registry closes them all.
   */
  @Override
  public EndpointCache open(CacheConfig config, EndpointListener... listeners) {
    return shared.open(config, List.of(listeners));
  }

  /** How many shared caches ({@link #open}) are open. */
  public int sharedCaches() {
    return shared.size();
  }

  /** How many holds the shared cache of {@code config} has (0: not open). */
  public int holds(CacheConfig config) {
    return shared.holds(config);
  }

  /** {@code backoffRandom} null: the cache draws its backoff jitter from its own {@link java.security.SecureRandom}. */
  private EndpointCache watch(CacheConfig config, CacheDriver.ResumeRule rule,
      java.util.random.RandomGenerator backoffRandom, List<EndpointListener> listeners) {
    return watch(config, rule, backoffRandom, 0, listeners);
  }

  private EndpointCache watch(CacheConfig config, CacheDriver.ResumeRule rule,
      java.util.random.RandomGenerator backoffRandom, long dropRevision, List<EndpointListener> listeners) {
    EndpointCache cache = EtcdCacheIo.startCache(connection, Objects.requireNonNull(config, "config"), rule, clock,
        backoffRandom, dropRevision, listeners, caches::remove); // a cache closed by its user leaves the list
    caches.add(cache);
    return cache;
  }

  /** How many times the etcd client was replaced to reconnect (for diagnostics and tests). */
  public long reconnects() {
    return connection.resets();
  }

  /**
   * The shared connection's counters, for diagnostics, tests and the bench: {@code replaced.accepts_again} and
   * {@code replaced.suspect} count client replacements by reason; {@code reports.*} count what became of the failure
   * reports of caches and registrations ({@code replaced}, {@code stale_client}: about a client already replaced,
   * {@code outvoted}: someone succeeded on it since, {@code down}: etcd refused connections, {@code young}: the
   * client had not yet had twice its connect timeout, {@code early}: its failures had not yet persisted for a connect
   * timeout with no success). See docs/design-storms.md. {@code keepalive.*} count what the
   * registrations' shared keepalive stream did, over all clients: {@code streams} opened, keepalives {@code sent} and
   * {@code answered}, streams {@code ended} (broken, or closed with their client), keepalives {@code failed}
   * by a stream's end and those {@code resent} on a new one, and the {@code tokens} it carried (docs/design-registrations.md, section 3).
   * {@code shared_lease.*} count the leases shared by registrations with {@code RegistrarConfig.sharedLease}:
   * {@code grants}, keepalive {@code round_trips} made for them, keepalives answered without one ({@code coalesced}),
   * and the shared leases {@code live} now.
   */
  public java.util.Map<String, Long> connectionStats() {
    java.util.Map<String, Long> stats = new java.util.LinkedHashMap<>(connection.stats());
    stats.putAll(leasesAhead.shared().stats());
    return stats;
  }

  /** The shared connection itself (for tests that report to it as a cache or registration would). */
  EtcdConnection connection() {
    return connection;
  }

  /** The registrations not yet closed (for tests). */
  List<Registration> openRegistrations() {
    return List.copyOf(registrations);
  }

  /** The ids of the leases granted ahead and not yet taken (for tests). */
  List<Long> leasesAhead() {
    return leasesAhead.readyIds();
  }

  /** The caches not yet closed (for tests). */
  List<EndpointCache> openCaches() {
    return List.copyOf(caches);
  }

  /**
   * Closes every registration still open, all at once: each drains (its own drain period, in parallel with the
   * others) and then revokes its lease. Then closes the caches and the connection.
   *
   * @throws RegistryUnavailableException when some lease could not be revoked (etcd unreachable for two request
   *     timeouts) or a registration did not finish closing in time; everything is closed regardless, and the keys
   *     named in the message expire with their leases
   */
  @Override
  public void close() {
    List<LiveRegistration> open = List.copyOf(registrations);
    List<CompletableFuture<Void>> closing = open.stream().map(LiveRegistration::closeAsync).toList();
    long startNanos = System.nanoTime();
    List<String> leftBehind = new ArrayList<>();
    for (int i = 0; i < open.size(); i++) {
      LiveRegistration r = open.get(i);
      long waitNanos = r.closeLimit().toNanos() - (System.nanoTime() - startNanos);
      try {
        closing.get(i).get(Math.max(0, waitNanos), TimeUnit.NANOSECONDS);
        r.leftBehind().ifPresent(why -> leftBehind.add(r.key() + " (" + why + ")"));
      } catch (TimeoutException e) {
        leftBehind.add(r.key() + " (still closing after " + r.closeLimit().toMillis() + " ms)");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        leftBehind.add(r.key() + " (interrupted while closing)");
        break;
      } catch (ExecutionException e) {
        leftBehind.add(r.key() + " (" + e.getCause() + ")");
      }
    }
    RuntimeException cacheFailure = null;
    shared.close(); // no new holds; the caches themselves are closed here with every other
    for (EndpointCache c : List.copyOf(caches)) {
      try {
        c.close();
      } catch (RuntimeException e) {
        if (cacheFailure == null) {
          cacheFailure = e;
        } else {
          cacheFailure.addSuppressed(e);
        }
      }
    }
    leasesAhead.close();
    registrarTimers.shutdownNow(); // a registration still open after its close limit has nothing left to do
    connection.close();
    if (!leftBehind.isEmpty()) {
      RegistryUnavailableException failure = new RegistryUnavailableException("closed, but could not revoke "
          + leftBehind.size() + " of " + open.size() + " registration(s); their keys expire with their leases: "
          + String.join(", ", leftBehind), null);
      if (cacheFailure != null) {
        failure.addSuppressed(cacheFailure);
      }
      throw failure;
    }
    if (cacheFailure != null) {
      throw cacheFailure;
    }
  }
}
