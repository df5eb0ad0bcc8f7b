package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.balancer;
import static dev.muster.balance.TestEndpoints.ejectAll;
import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointDelta.Kind;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.Outcome;
import dev.muster.registry.Instance;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link Balancer#update(EndpointSet, EndpointDelta)}: a cache's revision touches only the endpoints it changed. */
class BalancerDeltaTest {
  private final FakeTicker ticker = new FakeTicker();
  private final List<Instance> removed = new ArrayList<>();
  private final Balancer balancer = balancer(BalancerConfig.defaults(), ejectAll(), ticker, 1, removed::add);

  private Map<String, EndpointState> byId() {
    return balancer.endpoints().stream().collect(Collectors.toMap(e -> e.instance().id(), Function.identity()));
  }

  private void change(EndpointSet before, EndpointSet after) {
    balancer.onChange(after, EndpointDelta.between(Kind.UPDATE, before, after));
  }

  @Test
  void aDeltaTouchesOnlyTheEndpointsItNames() {
    Instance a = instance("a");
    Instance b = instance("b");
    Instance c = instance("c");
    EndpointSet first = set(a, b, c);
    balancer.onChange(first, EndpointDelta.between(Kind.SNAPSHOT, EndpointSet.EMPTY, first));
    Map<String, EndpointState> before = byId();
    balancer.detector().record(before.get("a").outlier(), Outcome.LOCAL_ORIGIN_FAILURE);
    assertThat(before.get("a").isEjected()).isTrue();

    // The next revision's set holds equal but distinct instance objects for a and c; only b changed, d is new.
    Instance a2 = instance("a");
    Instance b2 = instance("b").weight(7);
    EndpointSet second = set(a2, b2, instance("c"), instance("d"));
    change(first, second);

    Map<String, EndpointState> after = byId();
    assertThat(after.get("a")).isSameAs(before.get("a"));
    assertThat(after.get("b")).isSameAs(before.get("b"));
    assertThat(after.get("c")).isSameAs(before.get("c"));
    assertThat(after.get("a").instance()).as("an unchanged endpoint is not even refreshed").isSameAs(a);
    assertThat(after.get("c").instance()).isSameAs(c);
    assertThat(after.get("a").isEjected()).as("ejection of an unchanged endpoint is kept").isTrue();
    assertThat(after.get("b").instance()).isSameAs(b2);
    assertThat(after.get("d").inFlight()).isZero();
    assertThat(balancer.endpoints()).extracting(e -> e.instance().id()).containsExactly("a", "b", "c", "d");
    assertThat(removed).isEmpty();
  }

  @Test
  void aRemovalInADeltaDropsOnlyThatEndpointAndReportsIt() {
    EndpointSet first = set(instance("a"), instance("b"), instance("c"));
    balancer.update(first);
    Map<String, EndpointState> before = byId();
    before.get("c").started();

    EndpointSet second = set(instance("a"), instance("c"));
    change(first, second);

    assertThat(removed).extracting(Instance::id).containsExactly("b");
    assertThat(byId().get("c")).isSameAs(before.get("c"));
    assertThat(byId().get("c").inFlight()).isEqualTo(1);
    assertThat(balancer.endpoints()).extracting(e -> e.instance().id()).containsExactly("a", "c");
  }

  @Test
  void aDeltaThatDoesNotFitTheBalancersEndpointsIsIgnoredAndTheSetTakenWhole() {
    EndpointSet first = set(instance("a"), instance("b"));
    balancer.update(first);
    balancer.update(EndpointSet.EMPTY); // someone (the CLI's clear-on-stale control) emptied the balancer

    EndpointSet second = set(instance("a"), instance("b").weight(5));
    change(first, second); // a delta from `first`, which the balancer no longer holds

    assertThat(balancer.endpoints()).extracting(e -> e.instance().id()).containsExactly("a", "b");
    assertThat(byId().get("b").instance().weight()).isEqualTo(5);
  }

  @Test
  void aChangeOfFieldsThePickerDoesNotReadRefreshesTheInstanceAndKeepsThePicker() {
    EndpointSet first = set(instance("a"), instance("b"));
    balancer.update(first);
    List<EndpointState> endpoints = balancer.endpoints();

    Instance tagged = instance("b").tags(List.of("canary")).metadata(Map.of("build", "42"));
    EndpointSet second = set(instance("a"), tagged);
    change(first, second);

    assertThat(balancer.endpoints()).isSameAs(endpoints);
    assertThat(byId().get("b").instance()).isSameAs(tagged);

    EndpointSet third = set(instance("a"), tagged.weight(3));
    change(second, third);

    assertThat(balancer.endpoints()).as("a weight change rebuilds the picker").isNotSameAs(endpoints);
    assertThat(TestEndpoints.picks(balancer, 200)).contains("a", "b");
  }

  @Test
  void anEmptyDeltaKeepsThePicker() {
    EndpointSet first = set(instance("a"), instance("b"));
    balancer.update(first);
    List<EndpointState> endpoints = balancer.endpoints();

    EndpointSet same = set(instance("a"), instance("b"));
    balancer.onChange(same, EndpointDelta.between(Kind.RESYNC, first, same));

    assertThat(balancer.endpoints()).isSameAs(endpoints);
  }
}
