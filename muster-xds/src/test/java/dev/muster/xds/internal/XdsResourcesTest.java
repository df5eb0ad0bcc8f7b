package dev.muster.xds.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.HealthStatus;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.endpoint.v3.LocalityLbEndpoints;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class XdsResourcesTest {
  private static Instance at(String id, int port, String zone) {
    return Instance.of("orders", "127.0.0.1", port).id(id).zone(zone);
  }

  private static Map<String, LocalityLbEndpoints> byId(ClusterLoadAssignment cla) {
    return cla.getEndpointsList().stream()
        .collect(Collectors.toMap(l -> l.getLocality().getSubZone(), Function.identity()));
  }

  @Test
  void eachInstanceIsItsOwnLocalityWeightedByItsWeight() {
    ClusterLoadAssignment cla = XdsResources.assignment("orders",
        List.of(at("a", 1, "z1").weight(100), at("b", 2, "z1").weight(300), at("c", 3, null).weight(0)), Set.of(),
        null, true);

    Map<String, LocalityLbEndpoints> l = byId(cla);
    assertThat(l.get("a").getLoadBalancingWeight().getValue()).isEqualTo(100);
    assertThat(l.get("b").getLoadBalancingWeight().getValue()).isEqualTo(300);
    assertThat(l.get("b").getLocality().getZone()).isEqualTo("z1");
    assertThat(l.get("c").hasLoadBalancingWeight()).as("weight 0: no weight, no traffic").isFalse();
    assertThat(l.get("c").getLocality().getZone()).isEmpty();
    assertThat(l.values()).allSatisfy(x -> {
      assertThat(x.getLbEndpointsCount()).isEqualTo(1);
      assertThat(x.getLbEndpoints(0).hasLoadBalancingWeight()).as("endpoint weights unset").isFalse();
      assertThat(x.getPriority()).as("no client zone: one priority").isZero();
    });
  }

  @Test
  void statesAndProbesMapToHealthAndStartingIsLeftOut() {
    ClusterLoadAssignment cla = XdsResources.assignment("orders", List.of(at("up", 1, null),
        at("drains", 2, null).state(InstanceState.DRAINING), at("starts", 3, null).state(InstanceState.STARTING),
        at("sick", 4, null)), Set.of("sick"), null, true);

    Map<String, LocalityLbEndpoints> l = byId(cla);
    assertThat(l).containsOnlyKeys("up", "drains", "sick");
    assertThat(l.get("up").getLbEndpoints(0).getHealthStatus()).isEqualTo(HealthStatus.HEALTHY);
    assertThat(l.get("drains").getLbEndpoints(0).getHealthStatus()).isEqualTo(HealthStatus.DRAINING);
    assertThat(l.get("sick").getLbEndpoints(0).getHealthStatus()).isEqualTo(HealthStatus.UNHEALTHY);
  }

  @Test
  void theClientsZoneIsPriorityZeroAndAZoneWithNoInstanceIsNoPriority() {
    List<Instance> two = List.of(at("here", 1, "z1"), at("there", 2, "z2"));

    Map<String, LocalityLbEndpoints> z1 = byId(XdsResources.assignment("orders", two, Set.of(), "z1", true));
    assertThat(z1.get("here").getPriority()).isZero();
    assertThat(z1.get("there").getPriority()).isEqualTo(1);

    Map<String, LocalityLbEndpoints> z3 = byId(XdsResources.assignment("orders", two, Set.of(), "z3", true));
    assertThat(z3.values()).allSatisfy(x -> assertThat(x.getPriority()).isZero());

    Map<String, LocalityLbEndpoints> off = byId(XdsResources.assignment("orders", two, Set.of(), "z1", false));
    assertThat(off.values()).allSatisfy(x -> assertThat(x.getPriority()).isZero());
  }

  @Test
  void twoInstancesAtOneAddressAreOneEndpointTheServingOne() {
    ClusterLoadAssignment cla = XdsResources.assignment("orders", List.of(
        at("old", 1, null).state(InstanceState.DRAINING), at("new", 1, null)), Set.of(), null, true);

    assertThat(byId(cla)).containsOnlyKeys("new");
  }

  @Test
  void theListenerReadsItsRouteConfigurationOverAdsWithTheRouterLast() throws Exception {
    Listener l = XdsResources.listener("orders");

    HttpConnectionManager hcm = l.getApiListener().getApiListener().unpack(HttpConnectionManager.class);
    assertThat(l.getName()).isEqualTo("orders");
    assertThat(hcm.getRds().getRouteConfigName()).isEqualTo("orders");
    assertThat(hcm.getRds().getConfigSource().hasAds()).isTrue();
    assertThat(hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getTypedConfig().getTypeUrl())
        .isEqualTo("type.googleapis.com/envoy.extensions.filters.http.router.v3.Router");
  }

  @Test
  void theClusterCarriesMustersEjectionForEnvoyAndFailurePercentageForGrpc() {
    OutlierConfig o = OutlierConfig.defaults();

    Cluster c = XdsResources.cluster("orders", o, 50);

    assertThat(c.getType()).isEqualTo(Cluster.DiscoveryType.EDS);
    assertThat(c.getEdsClusterConfig().getServiceName()).isEqualTo("orders");
    assertThat(c.getOutlierDetection().getConsecutive5Xx().getValue()).isEqualTo(o.consecutive5xx());
    assertThat(c.getOutlierDetection().getBaseEjectionTime().getSeconds())
        .isEqualTo(o.baseEjectionTime().toSeconds());
    assertThat(c.getOutlierDetection().getEnforcingSuccessRate().getValue()).isZero();
    assertThat(c.getOutlierDetection().getFailurePercentageThreshold().getValue()).isEqualTo(50);
    assertThat(c.getOutlierDetection().getEnforcingFailurePercentage().getValue()).isEqualTo(100);
    assertThat(XdsResources.cluster("orders", o.toBuilder().enabled(false).build(), 50).hasOutlierDetection())
        .isFalse();
    assertThat(XdsResources.cluster("orders", o, 0).getOutlierDetection().getEnforcingFailurePercentage()
        .getValue()).isZero();
  }
}
