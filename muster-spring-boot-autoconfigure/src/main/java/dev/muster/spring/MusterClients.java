package dev.muster.spring;

import dev.muster.RegistryUnavailableException;
import dev.muster.balance.BalancerConfig;
import dev.muster.cache.CacheConfig;
import dev.muster.client.MusterClient;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.retry.RetryConfig;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One {@link MusterClient} per service this application calls — its endpoint cache (a live watch), its balancer
 * and ejection, its retry budget — started on first use and closed with the application. Discovery, the load
 * balancer, health and the actuator endpoint all read the same client, so they agree on one set per service.
 *
 * <p>Thread-safe: {@link #client} may be called from any thread; a service's client is created once.
 */
public final class MusterClients implements AutoCloseable {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(MusterClients.class);

  private final EtcdRegistry registry;
  private final MusterProperties properties;
  private final MeterRegistry meters; // null without Micrometer
  private final RetryConfig retry; // only its budget is used: Spring Cloud makes the retries
  private final Map<String, MusterClient> clients = new ConcurrentHashMap<>();
  private volatile boolean closed;
  private volatile List<String> lastServices = List.of();

  public MusterClients(EtcdRegistry registry, MusterProperties properties, MeterRegistry meters) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.properties = Objects.requireNonNull(properties, "properties");
    this.meters = meters;
    dev.muster.health.ProbeConfig pc = probe(properties.health()); // a bad muster.health.* fails the start
    this.retry = retryConfig(properties.loadbalancer().retryBudget()); // and so does a bad retry budget
    if (pc != null && pc.kind() == dev.muster.health.ProbeConfig.Kind.GRPC) {
      grpcProbe(pc).close(); // without muster-grpc on the class path, the start fails saying so
    }
  }

  /** The client of {@code service}, started (its cache ranging and watching) on the first call. */
  public MusterClient client(String service) {
    if (closed) {
      throw new IllegalStateException("Muster's clients are closed (the application is stopping); " + service
          + " cannot be looked up now");
    }
    return clients.computeIfAbsent(service, this::start);
  }

  /** The services with a started client, and their clients. */
  public Map<String, MusterClient> started() {
    return Map.copyOf(clients);
  }

  /**
   * The names of the services registered in the namespace, read from etcd. While etcd cannot be reached, the last
   * list read (with the services whose caches run), so that a health check built on it — Spring Cloud's
   * {@code discoveryComposite} — does not turn an application that keeps calling its last known sets DOWN.
   */
  public List<String> services() {
    try {
      List<String> now = List.copyOf(registry.services(properties.namespace()));
      lastServices = now;
      return now;
    } catch (RegistryUnavailableException e) {
      java.util.TreeSet<String> known = new java.util.TreeSet<>(lastServices);
      known.addAll(clients.keySet());
      return List.copyOf(known);
    }
  }

  public EtcdRegistry registry() {
    return registry;
  }

  private MusterClient start(String service) {
    MusterProperties.Discovery d = properties.discovery();
    String zone = d.zone() != null ? d.zone() : properties.instance().zone();
    MusterProperties.LoadBalancer lb = properties.loadbalancer();
    CacheConfig.Builder cache = CacheConfig.builder(service).namespace(properties.namespace()).version(d.version());
    if (!d.trustKeys().isEmpty()) {
      cache.trustedKeys(TrustedKeys.builder().service(properties.namespace(), service,
          d.trustKeys().stream().map(TrustedKey::read).toList()).build());
    }
    MusterClient.Builder b = MusterClient.builder(registry).service(service)
        .cache(cache.build())
        .balancer(BalancerConfig.defaults().toBuilder().localZone(zone).healthyPanicThreshold(lb.panicThreshold())
            .slowStart(lb.slowStart()).maxStale(d.maxStale(), d.stalePolicy()).build())
        .retry(retry)
        .firstSetTimeout(d.firstSetTimeout())
        .healthEvents(MusterClients::log);
    dev.muster.health.ProbeConfig probeConfig = probe(properties.health());
    if (probeConfig != null && probeConfig.kind() == dev.muster.health.ProbeConfig.Kind.GRPC) {
      b.probe(probeConfig, grpcProbe(probeConfig));
    } else {
      b.probe(probeConfig);
    }
    if (meters != null) {
      b.meters(meters);
    }
    return b.build(); // with a MeterRegistry, the client binds its own meters (dev.muster.metrics.MusterMeters)
  }

  /** Health events in the application's log: WARN when an instance or the registry is judged failing. */
  private static void log(dev.muster.health.HealthEvent e) {
    String what = e.service() + (e.instance() == null ? "" : "/" + e.instance());
    switch (e.type()) {
      case PROBE_DOWN, PANIC_ON, MAX_STALE_REACHED -> LOG.warn("{} {}: {}", e.type().jsonName(), what, e.detail());
      default -> LOG.info("{} {}: {}", e.type().jsonName(), what, e.detail());
    }
  }

  /**
   * A {@code grpc.health.v1} probe ({@code muster.health.probe: grpc} or {@code grpc:SERVICE}, for applications that
   * call gRPC services): muster-grpc's {@code GrpcHealthProbe}, loaded when muster-grpc is on the class path.
   */
  private static dev.muster.health.Probe grpcProbe(dev.muster.health.ProbeConfig pc) {
    try {
      return (dev.muster.health.Probe) Class.forName("dev.muster.grpc.GrpcHealthProbe")
          .getConstructor(dev.muster.health.ProbeConfig.class).newInstance(pc);
    } catch (ClassNotFoundException e) {
      throw new dev.muster.InvalidInputException("muster.health.probe", pc.describe(), "add dev.muster:muster-grpc"
          + " to the class path for grpc.health.v1 probes, or use http:/PATH or tcp");
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot create muster-grpc's GrpcHealthProbe: " + e, e);
    }
  }

  /** {@code muster.loadbalancer.retry-budget.*} as a {@link RetryConfig}; a bad value names the property. */
  static RetryConfig retryConfig(MusterProperties.RetryBudget b) {
    try {
      return RetryConfig.defaults().toBuilder().budget(b.ttl(), b.percentCanRetry(), b.minRetriesPerSecond())
          .build();
    } catch (dev.muster.InvalidInputException e) {
      String property = switch (e.field()) {
        case "budgetTtl" -> "ttl";
        case "budgetPercentCanRetry" -> "percent-can-retry";
        default -> "min-retries-per-second";
      };
      throw dev.muster.InvalidInputException.withMessage("muster.loadbalancer.retry-budget." + property, e.value(),
          "muster.loadbalancer.retry-budget." + property + " " + e.value() + " is invalid"
              + e.getMessage().substring(e.getMessage().indexOf(':')));
    }
  }

  /** The probe config of {@code muster.health.*}, or null when {@code muster.health.probe} is not set. */
  static dev.muster.health.ProbeConfig probe(MusterProperties.Health h) {
    if (h.probe() == null || h.probe().isBlank()) {
      return null;
    }
    dev.muster.health.ProbeConfig c = dev.muster.health.ProbeConfig.parse(h.probe()).withInterval(h.interval())
        .withTimeout(h.timeout()).withThresholds(h.unhealthyThreshold(), h.healthyThreshold());
    return c.kind() == dev.muster.health.ProbeConfig.Kind.HTTP ? c.withExpectedStatuses(h.expect()) : c;
  }


  @Override
  public void close() {
    closed = true;
    clients.values().forEach(MusterClient::close);
    clients.clear();
  }
}
