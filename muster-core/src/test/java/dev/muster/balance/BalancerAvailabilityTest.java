package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.balancer;
import static dev.muster.balance.TestEndpoints.draining;
import static dev.muster.balance.TestEndpoints.ejectAll;
import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.picks;
import static dev.muster.balance.TestEndpoints.set;
import static dev.muster.balance.TestEndpoints.starting;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.outlier.Outcome;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class BalancerAvailabilityTest {
  private final FakeTicker ticker = new FakeTicker();
  private final BalancerConfig roundRobin = BalancerConfig.builder().policy(Policy.ROUND_ROBIN).build();

  private static void eject(Balancer balancer, String id) {
    EndpointState e = balancer.endpoints().stream().filter(s -> s.instance().id().equals(id)).findFirst()
        .orElseThrow();
    assertThat(balancer.detector().record(e.outlier(), Outcome.LOCAL_ORIGIN_FAILURE)).isTrue();
  }

  @Nested
  class DrainingAndEjected {
    @Test
    void drainingEndpointsGetNoPicks() {
      Balancer balancer = balancer(roundRobin, ticker);
      balancer.update(set(instance("a"), draining("b"), instance("c")));

      assertThat(picks(balancer, 300)).containsOnly("a", "c");
      assertThat(balancer.isPanicking()).isFalse();
    }

    @Test
    void anEndpointThatStartsDrainingStopsGettingPicksAtTheNextUpdate() {
      Balancer balancer = balancer(roundRobin, ticker);
      balancer.update(set(instance("a"), instance("b")));
      balancer.update(set(instance("a"), draining("b")));

      assertThat(picks(balancer, 10)).containsOnly("a");
    }

    @Test
    void ejectedEndpointsGetNoPicks() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), instance("b"), instance("c")));

      eject(balancer, "b");

      assertThat(picks(balancer, 300)).containsOnly("a", "c");
    }

    @Test
    void anEjectedEndpointIsPickedAgainOnceItsEjectionTimeHasPassed() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), instance("b")));
      eject(balancer, "b");

      ticker.advance(Duration.ofSeconds(29));
      assertThat(picks(balancer, 10)).containsOnly("a");
      ticker.advance(Duration.ofSeconds(1));
      assertThat(picks(balancer, 10)).contains("a", "b");
      assertThat(balancer.endpoints()).noneMatch(EndpointState::isEjected);
    }
  }

  @Nested
  class Starting {
    @Test
    void aStartingEndpointGetsNoPicksUntilItIsUp() {
      Balancer balancer = balancer(roundRobin, ticker);
      balancer.update(set(instance("a"), starting("b")));
      assertThat(picks(balancer, 100)).containsOnly("a");

      balancer.update(set(instance("a"), instance("b")));
      assertThat(picks(balancer, 100)).containsOnly("a", "b");
    }

    @Test
    void panicNeverRoutesToAStartingEndpoint() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), starting("b")));
      eject(balancer, "a");

      assertThat(balancer.isPanicking()).isTrue();
      assertThat(picks(balancer, 100)).containsOnly("a");
    }

    @Test
    void aSetOfOnlyStartingEndpointsHasNothingToPickAndIsNotAPanic() {
      Balancer balancer = balancer(roundRobin, ticker);
      balancer.update(set(starting("a"), starting("b")));

      assertThat(balancer.pick()).isNull();
      assertThat(balancer.isPanicking()).isFalse();
    }
  }

  @Nested
  class Panic {
    @Test
    void whenEveryEndpointIsEjectedPicksGoToAllOfThem() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), instance("b")));

      eject(balancer, "a");
      assertThat(balancer.isPanicking()).isFalse();
      eject(balancer, "b");

      assertThat(balancer.isPanicking()).isTrue();
      assertThat(picks(balancer, 10)).containsOnly("a", "b");
    }

    @Test
    void whenEveryEndpointIsEjectedOrDrainingPicksGoToAllOfThem() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), draining("b"), draining("c")));

      eject(balancer, "a");

      assertThat(balancer.isPanicking()).isTrue();
      assertThat(new HashSet<>(picks(balancer, 30))).containsOnly("a", "b", "c");
    }

    @Test
    void panicEndsWhenAnEndpointIsUnejected() {
      Balancer balancer = balancer(roundRobin, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a"), draining("b")));
      eject(balancer, "a");
      assertThat(balancer.isPanicking()).isTrue();

      ticker.advance(Duration.ofSeconds(30));

      assertThat(balancer.isPanicking()).isFalse();
      assertThat(picks(balancer, 5)).containsOnly("a");
    }
  }

  @Nested
  class Zones {
    private final BalancerConfig zoneA = roundRobin.toBuilder().localZone("a").minLocalShare(0.5).build();

    private List<String> picksWith(dev.muster.registry.Instance... instances) {
      Balancer balancer = balancer(zoneA, ticker);
      balancer.update(set(instances));
      return picks(balancer, 100);
    }

    @Test
    void onlySameZoneEndpointsArePickedWhileEnoughOfThemAreAvailable() {
      assertThat(picksWith(instance("a1", "a"), instance("a2", "a"), instance("b1", "b"), instance("b2", "b")))
          .containsOnly("a1", "a2");
    }

    @Test
    void theLocalZoneIsStillPreferredWithExactlyTheMinimumShareAvailable() {
      assertThat(picksWith(instance("a1", "a"), draining("a2").zone("a"), instance("b1", "b")))
          .containsOnly("a1");
    }

    @Test
    void everyZoneIsUsedWhenTooFewLocalEndpointsAreAvailable() {
      assertThat(picksWith(instance("a1", "a"), draining("a2").zone("a"), draining("a3").zone("a"),
          instance("b1", "b"), instance("b2", "b")))
          .containsOnly("a1", "b1", "b2");
    }

    @Test
    void everyZoneIsUsedWhenTheLocalZoneHasNoEndpoint() {
      assertThat(picksWith(instance("b1", "b"), instance("c1", "c"))).containsOnly("b1", "c1");
    }

    @Test
    void ejectedLocalEndpointsCountAsUnavailable() {
      Balancer balancer = balancer(zoneA, ejectAll(), ticker, 1, null);
      balancer.update(set(instance("a1", "a"), instance("a2", "a"), instance("a3", "a"), instance("b1", "b")));
      assertThat(picks(balancer, 30)).containsOnly("a1", "a2", "a3");

      eject(balancer, "a1");
      assertThat(picks(balancer, 30)).containsOnly("a2", "a3");
      eject(balancer, "a2");
      assertThat(picks(balancer, 30)).containsOnly("a3", "b1");
    }

    @Test
    void withoutALocalZoneEveryZoneIsUsed() {
      Balancer balancer = balancer(roundRobin, ticker);
      balancer.update(set(instance("a1", "a"), instance("b1", "b")));

      assertThat(picks(balancer, 10)).containsOnly("a1", "b1");
    }
  }
}
