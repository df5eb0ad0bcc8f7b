package dev.muster.xds.internal;

import com.google.protobuf.Any;
import com.google.protobuf.Duration;
import com.google.protobuf.UInt32Value;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.cluster.v3.OutlierDetection;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.Endpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LbEndpoint;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Muster's model as the xDS resources a gRPC channel walks (docs/design-xds.md §1 and §3). Pure functions; the
 * listener, route configuration and cluster of a service depend only on its name and the server's settings, the
 * assignment on the service's set, the probes' verdicts and the client's zone.
 */
final class XdsResources {
  /** Circuit breaker: grpc-java's default of 1024 calls in flight per cluster and JVM would cap a busy client. */
  static final int MAX_REQUESTS = 1 << 20;

  private XdsResources() {}

  /** An API listener for {@code service}: an HTTP connection manager that reads route configuration {@code service}. */
  static Listener listener(String service) {
    HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
        .setStatPrefix(service)
        .setRds(Rds.newBuilder().setConfigSource(ads()).setRouteConfigName(service))
        .addHttpFilters(HttpFilter.newBuilder().setName("envoy.filters.http.router")
            .setTypedConfig(Any.pack(Router.getDefaultInstance())))
        .build();
    return Listener.newBuilder().setName(service)
        .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(hcm)))
        .build();
  }

  /** Every call to cluster {@code service}, whatever its host and path. */
  static RouteConfiguration route(String service) {
    return RouteConfiguration.newBuilder().setName(service)
        .addVirtualHosts(VirtualHost.newBuilder().setName(service).addDomains("*")
            .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix(""))
                .setRoute(RouteAction.newBuilder().setCluster(service))))
        .build();
  }

  /**
   * An EDS cluster over ADS, round robin, each instance its own locality (§3: gRPC weighs localities, not
   * endpoints), Muster's ejection settings as outlier detection (§3.1).
   */
  static Cluster cluster(String service, OutlierConfig outlier, int failurePercentage) {
    Cluster.Builder c = Cluster.newBuilder().setName(service)
        .setType(Cluster.DiscoveryType.EDS)
        .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setEdsConfig(ads()).setServiceName(service))
        .setLbPolicy(Cluster.LbPolicy.ROUND_ROBIN)
        .setCommonLbConfig(Cluster.CommonLbConfig.newBuilder()
            .setLocalityWeightedLbConfig(Cluster.CommonLbConfig.LocalityWeightedLbConfig.getDefaultInstance()))
        .setCircuitBreakers(CircuitBreakers.newBuilder().addThresholds(CircuitBreakers.Thresholds.newBuilder()
            .setMaxRequests(UInt32Value.of(MAX_REQUESTS))));
    if (outlier.enabled()) {
      c.setOutlierDetection(outlierDetection(outlier, failurePercentage));
    }
    return c.build();
  }

  /**
   * Envoy reads the consecutive-failure detectors Muster has; gRPC (gRFC A50) reads only success-rate and
   * failure-percentage ejection, so the failure-percentage detector carries the nearest equivalent. Success-rate
   * ejection is off: Muster has none.
   */
  static OutlierDetection outlierDetection(OutlierConfig o, int failurePercentage) {
    return OutlierDetection.newBuilder()
        .setConsecutive5Xx(UInt32Value.of(o.consecutive5xx()))
        .setEnforcingConsecutive5Xx(UInt32Value.of(100))
        .setSplitExternalLocalOriginErrors(true)
        .setConsecutiveLocalOriginFailure(UInt32Value.of(o.consecutiveLocalOriginFailure()))
        .setEnforcingConsecutiveLocalOriginFailure(UInt32Value.of(100))
        .setBaseEjectionTime(duration(o.baseEjectionTime()))
        .setMaxEjectionTime(duration(o.maxEjectionTime()))
        .setMaxEjectionPercent(UInt32Value.of(o.maxEjectionPercent()))
        .setInterval(duration(OUTLIER_INTERVAL))
        .setEnforcingSuccessRate(UInt32Value.of(0))
        .setFailurePercentageThreshold(UInt32Value.of(failurePercentage))
        .setEnforcingFailurePercentage(UInt32Value.of(failurePercentage > 0 ? 100 : 0))
        .setFailurePercentageMinimumHosts(UInt32Value.of(FAILURE_PERCENTAGE_MINIMUM_HOSTS))
        .setFailurePercentageRequestVolume(UInt32Value.of(FAILURE_PERCENTAGE_REQUEST_VOLUME))
        .build();
  }

  /** How often a client's failure-percentage detector looks (Envoy's and gRPC's default). */
  static final java.time.Duration OUTLIER_INTERVAL = java.time.Duration.ofSeconds(10);
  /** The detector needs this many endpoints (A50's default is 5, which would leave most services unprotected). */
  static final int FAILURE_PERCENTAGE_MINIMUM_HOSTS = 2;
  /** ... and this many calls to an endpoint in an interval before it judges it (A50's default is 50). */
  static final int FAILURE_PERCENTAGE_REQUEST_VOLUME = 10;

  /**
   * The assignment of {@code service} as a client in {@code clientZone} (null: none) sees it: every instance but
   * STARTING ones, each its own locality (region, zone, sub-zone = its id) weighted by its weight (a weight of 0
   * leaves the weight out, which every client reads as no traffic); DRAINING as {@code DRAINING}, a probe-failed one
   * as {@code UNHEALTHY}, the rest {@code HEALTHY}. With {@code zonePriorities} and a client zone, instances in the
   * client's zone are priority 0 and the others 1; when the client's zone has none, all are priority 0 (priorities
   * are contiguous). Two instances at one address are one endpoint (a client refuses an assignment that lists an
   * address twice): the healthier, or the later.
   */
  static ClusterLoadAssignment assignment(String service, Iterable<Instance> instances, Set<String> probeDownIds,
      String clientZone, boolean zonePriorities) {
    Map<String, Instance> byAddress = new LinkedHashMap<>();
    for (Instance i : instances) {
      if (i.state() == InstanceState.STARTING) {
        continue;
      }
      String at = i.address() + ":" + i.port();
      Instance held = byAddress.get(at);
      if (held == null || rank(i, probeDownIds) <= rank(held, probeDownIds)) {
        byAddress.put(at, i);
      }
    }
    boolean local = zonePriorities && clientZone != null
        && byAddress.values().stream().anyMatch(i -> clientZone.equals(i.zone()));
    ClusterLoadAssignment.Builder cla = ClusterLoadAssignment.newBuilder().setClusterName(service);
    for (Instance i : byAddress.values()) {
      LocalityLbEndpoints.Builder l = LocalityLbEndpoints.newBuilder()
          .setLocality(Locality.newBuilder().setRegion(nullToEmpty(i.region())).setZone(nullToEmpty(i.zone()))
              .setSubZone(i.id()))
          .setPriority(local && !clientZone.equals(i.zone()) ? 1 : 0)
          .addLbEndpoints(LbEndpoint.newBuilder()
              .setEndpoint(Endpoint.newBuilder().setAddress(Address.newBuilder().setSocketAddress(
                  SocketAddress.newBuilder().setAddress(i.address()).setPortValue(i.port()))))
              .setHealthStatus(health(i, probeDownIds)));
      if (i.weight() > 0) {
        l.setLoadBalancingWeight(UInt32Value.of(i.weight()));
      }
      cla.addEndpoints(l);
    }
    return cla.build();
  }

  static HealthStatus health(Instance i, Set<String> probeDownIds) {
    if (i.state() == InstanceState.DRAINING) {
      return HealthStatus.DRAINING;
    }
    return probeDownIds.contains(i.id()) ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY;
  }

  /** 0 serves, 1 drains, 2 failed its probe: of two instances at one address, the lower rank is served. */
  private static int rank(Instance i, Set<String> probeDownIds) {
    return switch (health(i, probeDownIds)) {
      case HEALTHY -> 0;
      case DRAINING -> 1;
      default -> 2;
    };
  }

  private static ConfigSource ads() {
    return ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
        .setResourceApiVersion(ApiVersion.V3).build();
  }

  private static Duration duration(java.time.Duration d) {
    return Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
