package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.balancer;
import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.picks;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import dev.muster.balance.BalancerConfig.Policy;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class BalancerPolicyTest {
  private final FakeTicker ticker = new FakeTicker();

  private Balancer balancerFor(Policy policy) {
    return balancer(BalancerConfig.builder().policy(policy).build(), ticker);
  }

  private static Map<String, Long> counts(List<String> ids) {
    return ids.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
  }

  private static EndpointState endpoint(Balancer balancer, String id) {
    return balancer.endpoints().stream().filter(e -> e.instance().id().equals(id)).findFirst().orElseThrow();
  }

  @Test
  void roundRobinVisitsTheEndpointsInTurnAndEvenly() {
    Balancer balancer = balancerFor(Policy.ROUND_ROBIN);
    balancer.update(set(instance("a"), instance("b"), instance("c")));

    List<String> ids = picks(balancer, 3000);

    assertThat(ids.subList(0, 6)).containsExactly("a", "b", "c", "a", "b", "c");
    assertThat(counts(ids)).containsOnly(Map.entry("a", 1000L), Map.entry("b", 1000L), Map.entry("c", 1000L));
  }

  @Test
  void weightedRandomFollowsTheWeightsWithinTwoPercentOver100000Picks() {
    Balancer balancer = balancerFor(Policy.WEIGHTED_RANDOM);
    balancer.update(set(instance("a").weight(100), instance("b").weight(300), instance("c").weight(600)));

    Map<String, Long> counts = counts(picks(balancer, 100_000));

    assertThat(counts.get("a") / 100_000.0).isCloseTo(0.1, withinPercentage(2));
    assertThat(counts.get("b") / 100_000.0).isCloseTo(0.3, withinPercentage(2));
    assertThat(counts.get("c") / 100_000.0).isCloseTo(0.6, withinPercentage(2));
  }

  @Test
  void aWeightZeroEndpointIsNeverPickedWhileAnotherHasWeight() {
    for (Policy policy : Policy.values()) {
      Balancer balancer = balancerFor(policy);
      balancer.update(set(instance("a").weight(0), instance("b"), instance("c")));

      assertThat(picks(balancer, 1000)).as(policy.name()).doesNotContain("a");
    }
  }

  @Test
  void weightZeroEndpointsArePickedEvenlyWhenEveryEndpointHasWeightZero() {
    Balancer balancer = balancerFor(Policy.WEIGHTED_RANDOM);
    balancer.update(set(instance("a").weight(0), instance("b").weight(0)));

    Map<String, Long> counts = counts(picks(balancer, 10_000));

    assertThat(counts.get("a")).isBetween(4_500L, 5_500L);
    assertThat(counts.get("b")).isBetween(4_500L, 5_500L);
  }

  @Test
  void powerOfTwoPrefersTheEndpointWithFewerAttemptsInFlight() {
    Balancer balancer = balancerFor(Policy.POWER_OF_TWO);
    balancer.update(set(instance("a"), instance("b")));
    endpoint(balancer, "a").started();

    assertThat(picks(balancer, 100)).containsOnly("b");
  }

  @Test
  void powerOfTwoNeverPicksTheMostLoadedOfThreeEndpoints() {
    Balancer balancer = balancerFor(Policy.POWER_OF_TWO);
    balancer.update(set(instance("a"), instance("b"), instance("c")));
    for (int i = 0; i < 5; i++) {
      endpoint(balancer, "c").started();
    }
    endpoint(balancer, "b").started();

    Map<String, Long> counts = counts(picks(balancer, 3000));

    assertThat(counts).doesNotContainKey("c");
    // a wins every draw it is in (2 of 3 pairs); b only wins the pair {b, c}
    assertThat(counts.get("a")).isBetween(1_900L, 2_100L);
  }

  @Test
  void powerOfTwoPrefersTheFasterEndpointAtEqualLoad() {
    Balancer balancer = balancerFor(Policy.POWER_OF_TWO);
    balancer.update(set(instance("a"), instance("b")));
    for (String id : List.of("a", "b")) {
      EndpointState e = endpoint(balancer, id);
      e.started();
      e.finished(Duration.ofMillis(id.equals("a") ? 80 : 20));
    }

    assertThat(picks(balancer, 100)).containsOnly("b");
  }

  @Test
  void aSingleEndpointIsPickedByEveryPolicy() {
    for (Policy policy : Policy.values()) {
      Balancer balancer = balancerFor(policy);
      balancer.update(set(instance("a")));

      assertThat(picks(balancer, 10)).as(policy.name()).isEqualTo(Collections.nCopies(10, "a"));
    }
  }

  @Test
  void anEmptySetPicksNothing() {
    Balancer balancer = balancerFor(Policy.POWER_OF_TWO);

    assertThat(balancer.pick()).isNull();
    balancer.update(set());
    assertThat(balancer.pick()).isNull();
    assertThat(balancer.isPanicking()).isFalse();
  }
}
