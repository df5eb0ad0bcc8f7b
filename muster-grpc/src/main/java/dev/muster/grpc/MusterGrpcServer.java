package dev.muster.grpc;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.ServerServiceDefinition;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Longer than our 500-line guide: about 170 of its lines are the nested Builder's setters (docs/ARCHITECTURE.md),
 * kept here so the API reads MusterGrpcServer.builder(...) like grpc-java's own builders; the server's own part is
 * under 400.
 */
/**
 * A gRPC server that registers itself in Muster once it listens and leaves without failing a call: it publishes
 * DRAINING, flips its health to NOT_SERVING, gives consumers the drain period to stop picking it, sends GOAWAY,
 * lets in-flight calls finish up to a deadline, revokes its lease and only then cuts what is left.
 *
 * <p>Thread-safe. {@link #start()} runs on the caller's thread and blocks until the key is in etcd. {@link #close()}
 * and {@link #closeAsync()} may be called from any thread, any number of times; the stop sequence runs once: the
 * drain is the registration's ({@link Registration#drain()}, a timer: no thread waits it out), and what follows it
 * runs on a thread of its own ({@code muster-grpc-stop-<id>}, started when the drain ends; not a daemon: a JVM whose
 * main thread returned still stops cleanly), and {@code close()} waits for it. With {@link RegistrarConfig#shutdownHook()} on (the default) a JVM shutdown
 * hook ({@code muster-grpc-stop-hook-<id>}) calls {@code closeAsync()} on SIGTERM/SIGINT and waits for it; a close
 * by the application removes the hook. The lifecycle is one {@link AtomicReference}; no lock is held, neither
 * across I/O nor around a callback. Registration events reach the {@link Builder#listener listener} on the
 * registration's thread, in order, as {@link EtcdRegistry#register} delivers them.
 *
 * <pre>
 * NEW --start()--> STARTING: server.start() (unless already started), health SERVING for "", the Muster service
 *                            and every gRPC service served; register(host, server.getPort())
 *     STARTING --registered--> SERVING          (a refused or unreachable registration: server.shutdownNow(),
 *                                                TERMINATED, and start() throws what register() threw)
 * NEW --close()--> TERMINATED                   (a server handed over already started is shut down)
 * SERVING --close()/SIGTERM--> DRAINING:
 *     1. health NOT_SERVING (enterTerminalState)
 *     2. registration.drain()                   (state DRAINING on the same lease, the lease kept alive; nothing
 *                                                published with a zero drain, as the registrar does)
 *     3. the drain period, a timer              (consumers' caches see DRAINING; their balancers stop picking)
 * DRAINING --drain() completed--> STOPPING:
 *     4. server.shutdown()                      (GOAWAY: clients open new streams elsewhere; in-flight ones go on)
 *     5. server.awaitTermination(shutdownDeadline)
 *     6. registration.close()                   (revokes at once: the drain is done)
 *     7. server.shutdownNow() if calls were still running at the deadline
 * STOPPING --> TERMINATED                       ({@link #terminated()} completes)
 * </pre>
 *
 * <p>Why {@code drain()} then {@code close()} and not the registrar's close alone: that close revokes when its drain
 * period ends, but the lease should outlive the calls still being served. So the registration is made without a
 * shutdown hook of its own (this server's hook runs the whole sequence), and its {@code drain()} is the drain: the
 * {@link RegistrarConfig} given keeps its meaning (its {@code drain} is the drain period, its {@code shutdownHook}
 * whether SIGTERM stops the server). The events are the registration's own, as {@code muster register} prints
 * them: REGISTERED, DRAINING, DRAINED, REVOKED.
 *
 * <p>The server is this object's from {@link #start()} on: it is shut down by {@code close()} and by a failed start.
 * A registration that gives up later (FAILED, after {@code maxFailures}) is reported to the listener and the server
 * keeps serving until it is closed: what to do then is the application's call.
 */
public final class MusterGrpcServer implements AutoCloseable {
  /** Where the server is in its life; see the class comment. */
  public enum State { NEW, STARTING, SERVING, DRAINING, STOPPING, TERMINATED }

  private static final Logger log = LoggerFactory.getLogger(MusterGrpcServer.class);
  private static final String HEALTH_SERVICE = "grpc.health.v1.Health";

  private final EtcdRegistry registry;
  private final ServerBuilder<?> serverBuilder; // null when a server was handed over
  private final Builder settings;
  private final RegistrarConfig config; // as given: drain and shutdownHook are this class's to honour
  private final HealthStatusManager health; // null: a started server handed over without one
  private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
  private final CompletableFuture<Void> terminated = new CompletableFuture<>();
  private volatile boolean closeRequested;
  private volatile Server server;
  private volatile Registration registration;
  private volatile Instance instance;
  private volatile Thread hook;

  private MusterGrpcServer(Builder b) {
    this.registry = b.registry;
    this.serverBuilder = b.serverBuilder;
    this.server = b.server;
    this.settings = b;
    this.config = b.registrarConfig();
    HealthStatusManager h = b.health;
    if (h == null && serverBuilder != null) {
      h = new HealthStatusManager();
    }
    if (serverBuilder != null) {
      serverBuilder.addService(h.getHealthService());
    }
    this.health = h;
  }

  /**
   * A server built from {@code serverBuilder} (with the application's services on it) when {@link #start()} runs;
   * the {@code grpc.health.v1} service is added to it.
   */
  public static Builder builder(EtcdRegistry registry, ServerBuilder<?> serverBuilder) {
    return new Builder(registry, Objects.requireNonNull(serverBuilder, "serverBuilder"), null);
  }

  /**
   * A server the application built (and may have started: {@link #start()} starts it if not). Health is served only
   * if the application added a {@link HealthStatusManager}'s service to it and passes that manager with
   * {@link Builder#health}.
   */
  public static Builder builder(EtcdRegistry registry, Server server) {
    return new Builder(registry, null, Objects.requireNonNull(server, "server"));
  }

  /**
   * Starts the server if it is not running, marks it SERVING in health and registers it with the port it is bound
   * to. Blocks until the key is in etcd.
   *
   * @throws dev.muster.MusterException what {@link EtcdRegistry#register} threw (duplicate id, etcd unreachable,
   *     refused); the server is then shut down
   * @throws UncheckedIOException the server could not bind
   * @throws IllegalStateException start() was called before, or after close()
   */
  public MusterGrpcServer start() {
    if (!state.compareAndSet(State.NEW, State.STARTING)) {
      throw new IllegalStateException("start() on a MusterGrpcServer that is " + state.get()
          + ": start it once, before close()");
    }
    Server s;
    int port;
    try {
      s = startServer();
      port = s.getPort();
      if (port <= 0) {
        throw new IllegalStateException("the gRPC server has no port (" + port + "): bind it to a TCP port");
      }
    } catch (RuntimeException e) {
      terminate();
      throw e;
    }
    Instance i = settings.instanceAt(port);
    instance = i;
    if (health != null) {
      for (String name : healthNames(s, i.service())) {
        health.setStatus(name, ServingStatus.SERVING);
      }
    }
    try {
      registration = registry.register(i, config.toBuilder().shutdownHook(false).build(), settings.listener);
    } catch (RuntimeException e) {
      s.shutdownNow();
      terminate();
      throw e;
    }
    if (config.shutdownHook()) {
      Thread h = new Thread(this::stopOnJvmExit, "muster-grpc-stop-hook-" + i.id());
      Runtime.getRuntime().addShutdownHook(h);
      hook = h;
    }
    state.set(State.SERVING);
    if (closeRequested) {
      beginStop(); // a close() came while we were starting
    }
    return this;
  }

  /** Starts the stop sequence (once) and returns {@link #terminated()}. */
  public CompletableFuture<Void> closeAsync() {
    if (state.compareAndSet(State.NEW, State.TERMINATED)) {
      Server s = server;
      if (s != null) {
        s.shutdownNow();
      }
      terminated.complete(null);
      return terminated;
    }
    closeRequested = true;
    beginStop();
    return terminated;
  }

  /** {@link #closeAsync()} and wait for the sequence to end (an interrupt ends the wait, flag restored). */
  @Override
  public void close() {
    try {
      closeAsync().get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the stop sequence of " + describe() + " failed", e.getCause());
    }
  }

  /** Completes when the server has stopped and the lease is revoked (or could not be: see the registration). */
  public CompletableFuture<Void> terminated() {
    return terminated;
  }

  public State state() {
    return state.get();
  }

  /** The port the server is bound to; -1 before {@link #start()}. */
  public int port() {
    Instance i = instance;
    return i == null ? -1 : i.port();
  }

  /** The instance registered (its port the bound one); null before {@link #start()}. */
  public Instance instance() {
    return instance;
  }

  /** The registration; null before {@link #start()} succeeded. */
  public Registration registration() {
    return registration;
  }

  /** The gRPC server; null before {@link #start()} when built from a {@link ServerBuilder}. */
  public Server server() {
    return server;
  }

  /** The health manager this server drives; null for a server handed over without one. */
  public HealthStatusManager health() {
    return health;
  }

  // ---- starting --------------------------------------------------------------------------------------

  private Server startServer() {
    Server s = server;
    try {
      if (s == null) {
        s = serverBuilder.build();
        server = s;
        s.start();
      } else if (!isStarted(s)) {
        s.start();
      }
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the gRPC server of " + settings.service + ": "
          + e.getMessage(), e);
    }
    return s;
  }

  private static boolean isStarted(Server s) {
    try {
      s.getPort(); // grpc-java's ServerImpl refuses this before start()
      return true;
    } catch (IllegalStateException notStarted) {
      return false;
    }
  }

  /** "", the Muster service name and every gRPC service served (health aside), in that order. */
  private static Set<String> healthNames(Server s, String service) {
    Set<String> names = new LinkedHashSet<>(List.of("", service));
    for (ServerServiceDefinition d : s.getServices()) {
      String name = d.getServiceDescriptor().getName();
      if (!name.equals(HEALTH_SERVICE)) {
        names.add(name);
      }
    }
    return names;
  }

  private void terminate() {
    state.set(State.TERMINATED);
    terminated.complete(null);
  }

  // ---- the stop sequence -----------------------------------------------------------------------------

  private void beginStop() {
    if (!state.compareAndSet(State.SERVING, State.DRAINING)) {
      return; // not started yet (start() calls us when it is), or already stopping
    }
    if (health != null) {
      health.enterTerminalState();
    }
    registration.drain().whenCompleteAsync((v, e) -> stop(),
        task -> new Thread(task, "muster-grpc-stop-" + instance.id()).start());
  }

  /** Steps 4-7, once the drain has ended; on the stop thread. */
  private void stop() {
    try {
      state.set(State.STOPPING);
      Server s = server;
      s.shutdown();
      boolean done = s.awaitTermination(settings.shutdownDeadline.toNanos(), TimeUnit.NANOSECONDS);
      registration.close(); // drained: revokes at once
      if (!done) {
        log.warn("{}: calls still running {} ms after GOAWAY; cancelling them", describe(),
            settings.shutdownDeadline.toMillis());
        s.shutdownNow();
        s.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      server.shutdownNow();
      registration.closeAsync();
    } catch (RuntimeException | Error e) {
      log.error("{}: the stop sequence failed; shutting down now", describe(), e);
      server.shutdownNow();
      registration.closeAsync();
    } finally {
      removeHook();
      state.set(State.TERMINATED);
      terminated.complete(null);
    }
  }

  private void stopOnJvmExit() {
    hook = null; // a hook cannot be removed while the JVM runs it
    Duration limit = config.drain().plus(settings.shutdownDeadline).plus(config.requestTimeout().multipliedBy(4))
        .plusSeconds(10);
    try {
      closeAsync().get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      log.warn("{}: the stop sequence did not end within {} ms of JVM shutdown", describe(), limit.toMillis());
    }
  }

  private void removeHook() {
    Thread h = hook;
    hook = null;
    if (h != null && h != Thread.currentThread()) {
      try {
        Runtime.getRuntime().removeShutdownHook(h);
      } catch (IllegalStateException shuttingDown) {
        // the JVM is exiting: the hook runs and finds the sequence done
      }
    }
  }

  private String describe() {
    Instance i = instance;
    return i == null ? "gRPC server of " + settings.service : i.key().path() + " at " + i.address() + ":" + i.port();
  }

  /**
   * How to register and stop a {@link MusterGrpcServer}. Required: {@link #service} and {@link #address}; checked
   * in {@link #build()}, which also builds a sample instance so a bad name, zone or weight fails there and not at
   * start. Not thread-safe.
   */
  public static final class Builder {
    private final EtcdRegistry registry;
    private final ServerBuilder<?> serverBuilder;
    private final Server server;
    private String service;
    private String address;
    private String id;
    private String namespace;
    private String version = Instance.DEFAULT_VERSION;
    private String zone;
    private String region;
    private int weight = Instance.DEFAULT_WEIGHT;
    private final List<String> tags = new ArrayList<>();
    private final java.util.Map<String, String> metadata = new java.util.TreeMap<>();
    private RegistrarConfig registrar = RegistrarConfig.defaults();
    private Duration drain;
    private Duration shutdownDeadline = Duration.ofSeconds(10);
    private RegistrationListener listener = RegistrationListener.NONE;
    private HealthStatusManager health;
    private boolean startNotReady;

    private Builder(EtcdRegistry registry, ServerBuilder<?> serverBuilder, Server server) {
      this.registry = Objects.requireNonNull(registry, "registry");
      this.serverBuilder = serverBuilder;
      this.server = server;
    }

    /** The Muster service name (required); also a health service name. */
    public Builder service(String service) {
      this.service = service;
      return this;
    }

    /** The host consumers dial (required): the server's port is added at start. */
    public Builder address(String address) {
      this.address = address;
      return this;
    }

    /** The instance id (default: {@code HOST-PORT-6 random hex}, as {@link Instance#of}). */
    public Builder id(String id) {
      this.id = id;
      return this;
    }

    /** The registry namespace (default {@value Instance#DEFAULT_NAMESPACE}). */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    public Builder version(String version) {
      this.version = version;
      return this;
    }

    public Builder zone(String zone) {
      this.zone = zone;
      return this;
    }

    public Builder region(String region) {
      this.region = region;
      return this;
    }

    public Builder weight(int weight) {
      this.weight = weight;
      return this;
    }

    public Builder tag(String tag) {
      tags.add(tag);
      return this;
    }

    public Builder metadata(java.util.Map<String, String> entries) {
      metadata.putAll(entries);
      return this;
    }

    public Builder meta(String key, String value) {
      metadata.put(key, value);
      return this;
    }

    /**
     * Lease settings (TTL, keepalive, start timeout, signing key), the drain period and whether a JVM shutdown hook
     * stops the server (default {@link RegistrarConfig#defaults()}).
     */
    public Builder registrar(RegistrarConfig registrar) {
      this.registrar = Objects.requireNonNull(registrar, "registrar");
      return this;
    }

    /** The drain period, overriding the {@link #registrar} config's; {@code null} uses that one. */
    public Builder drain(Duration drain) {
      this.drain = drain;
      return this;
    }

    /** How long in-flight calls may run after GOAWAY before they are cancelled (default 10 s). */
    public Builder shutdownDeadline(Duration shutdownDeadline) {
      this.shutdownDeadline = shutdownDeadline;
      return this;
    }

    /** Receives the registration's events (see the class comment for DRAINING). */
    public Builder listener(RegistrationListener listener) {
      this.listener = listener == null ? RegistrationListener.NONE : listener;
      return this;
    }

    /**
     * The health manager to drive. With a {@link ServerBuilder} its service is added to the builder (default: a new
     * manager); with a server handed over there is none unless given here, and its service must already be on the
     * server.
     */
    public Builder health(HealthStatusManager health) {
      this.health = health;
      return this;
    }

    /**
     * Registers the instance {@code STARTING} (in every consumer's cache, picked by none) until the application
     * calls {@code registration().ready()}: for a server that must warm up after it listens (default: {@code UP}).
     */
    public Builder startNotReady(boolean notReady) {
      this.startNotReady = notReady;
      return this;
    }

    public MusterGrpcServer build() {
      if (service == null) {
        throw new dev.muster.InvalidInputException("service", null, "name the service, e.g. .service(\"orders\")");
      }
      if (address == null) {
        throw new dev.muster.InvalidInputException("address", null, "give the host consumers dial, e.g."
            + " .address(\"10.0.0.7\")");
      }
      if (shutdownDeadline == null || shutdownDeadline.isNegative()) {
        throw new dev.muster.InvalidInputException("shutdownDeadline", shutdownDeadline, "use 0 or more");
      }
      registrarConfig(); // refuses a bad drain
      instanceAt(1); // refuses a bad name, zone, weight, tag or metadata now rather than at start
      return new MusterGrpcServer(this);
    }

    RegistrarConfig registrarConfig() {
      return drain == null ? registrar : registrar.toBuilder().drain(drain).build();
    }

    Instance instanceAt(int port) {
      Instance i = Instance.of(service, address, port);
      if (id != null) {
        i = i.id(id);
      }
      if (namespace != null) {
        i = i.namespace(namespace);
      }
      i = i.version(version).zone(zone).region(region).weight(weight).tags(tags).metadata(metadata);
      return startNotReady ? i.state(InstanceState.STARTING) : i;
    }
  }
}
