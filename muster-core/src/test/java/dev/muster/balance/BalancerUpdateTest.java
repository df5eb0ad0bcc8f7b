package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.balancer;
import static dev.muster.balance.TestEndpoints.ejectAll;
import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.outlier.Outcome;
import dev.muster.registry.Instance;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class BalancerUpdateTest {
  private final FakeTicker ticker = new FakeTicker();
  private final List<Instance> removed = new ArrayList<>();

  private static EndpointState endpoint(Balancer balancer, String id) {
    return balancer.endpoints().stream().filter(e -> e.instance().id().equals(id)).findFirst().orElseThrow();
  }

  @Nested
  class Updates {
    @Test
    void anUpdateKeepsTheStateOfSurvivingEndpointsAndReportsRemovedInstances() {
      Balancer balancer = balancer(BalancerConfig.defaults(), ejectAll(), ticker, 1, removed::add);
      balancer.update(set(instance("a"), instance("b"), instance("c")));
      EndpointState a = endpoint(balancer, "a");
      a.started();
      a.started();
      a.finished(Duration.ofMillis(40));
      balancer.detector().record(endpoint(balancer, "b").outlier(), Outcome.LOCAL_ORIGIN_FAILURE);

      balancer.update(set(instance("a").weight(7), instance("b"), instance("d")));

      EndpointState a2 = endpoint(balancer, "a");
      assertThat(a2).isSameAs(a);
      assertThat(a2.inFlight()).isEqualTo(1);
      assertThat(a2.ewmaLatency()).isEqualTo(Duration.ofMillis(40));
      assertThat(a2.instance().weight()).isEqualTo(7);
      assertThat(endpoint(balancer, "b").isEjected()).isTrue();
      assertThat(endpoint(balancer, "d").inFlight()).isZero();
      assertThat(removed).extracting(Instance::id).containsExactly("c");
      assertThat(balancer.endpoints()).extracting(e -> e.instance().id()).containsExactly("a", "b", "d");
    }

    @Test
    void aKeyThatLeavesAndReturnsStartsAfresh() {
      Balancer balancer = balancer(BalancerConfig.defaults(), ticker);
      balancer.update(set(instance("a")));
      endpoint(balancer, "a").started();

      balancer.update(set());
      balancer.update(set(instance("a")));

      assertThat(endpoint(balancer, "a").inFlight()).isZero();
    }

    @Test
    void aFailingRemovalCallbackDoesNotStopTheUpdate() {
      Balancer balancer = balancer(BalancerConfig.defaults(), OutlierConfig.defaults(), ticker, 1, i -> {
        throw new IllegalStateException("boom");
      });
      balancer.update(set(instance("a"), instance("b")));

      balancer.update(set(instance("b")));

      assertThat(balancer.endpoints()).extracting(e -> e.instance().id()).containsExactly("b");
    }

    @Test
    void oneDetectorCannotServeTwoBalancers() {
      OutlierDetector detector = new OutlierDetector(OutlierConfig.defaults(), ticker);
      new Balancer(BalancerConfig.defaults(), detector, ticker, SplittableRandom::new, null);

      assertThatThrownBy(() -> new Balancer(BalancerConfig.defaults(), detector, ticker, SplittableRandom::new, null))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("one per service");
    }
  }

  @Nested
  class PickingAnotherEndpoint {
    @Test
    void aRetryPickNeverReturnsTheAvoidedEndpoint() {
      for (Policy policy : Policy.values()) {
        Balancer balancer = balancer(BalancerConfig.builder().policy(policy).build(), ticker);
        balancer.update(set(instance("a"), instance("b"), instance("c")));
        EndpointState b = endpoint(balancer, "b");

        for (int i = 0; i < 300; i++) {
          assertThat(balancer.pick(b)).as(policy.name()).isNotNull().isNotSameAs(b);
        }
      }
    }

    @Test
    void aRetryPickIsNullWhenTheAvoidedEndpointIsTheOnlyOne() {
      Balancer balancer = balancer(BalancerConfig.defaults(), ticker);
      balancer.update(set(instance("a")));

      assertThat(balancer.pick(endpoint(balancer, "a"))).isNull();
    }

    @Test
    void aRetryPickLeavesTheLocalZoneWhenItsOnlyEndpointIsAvoided() {
      Balancer balancer = balancer(BalancerConfig.builder().localZone("a").build(), ticker);
      balancer.update(set(instance("a1", "a"), instance("b1", "b")));
      EndpointState a1 = endpoint(balancer, "a1");

      assertThat(balancer.pick()).isSameAs(a1);
      assertThat(balancer.pick(a1).instance().id()).isEqualTo("b1");
    }

    @Test
    void aRetryPickWeighsTheOtherEndpoints() {
      Balancer balancer = balancer(BalancerConfig.builder().policy(Policy.WEIGHTED_RANDOM).build(), ticker);
      balancer.update(set(instance("a").weight(100), instance("b").weight(100), instance("c").weight(300)));
      EndpointState a = endpoint(balancer, "a");

      int c = 0;
      for (int i = 0; i < 40_000; i++) {
        c += balancer.pick(a).instance().id().equals("c") ? 1 : 0;
      }

      assertThat(c / 40_000.0).isBetween(0.73, 0.77);
    }
  }

  @Nested
  class HotPath {
    @Test
    void picksAllocateNothing() {
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      for (Policy policy : Policy.values()) {
        Balancer balancer = balancer(BalancerConfig.builder().policy(policy).build(), ticker);
        balancer.update(set(instance("a").weight(1), instance("b").weight(2), instance("c").weight(3)));
        EndpointState a = endpoint(balancer, "a");
        long id = Thread.currentThread().getId();
        pickMany(balancer, a, 20_000); // warm up

        long before = threads.getThreadAllocatedBytes(id);
        pickMany(balancer, a, 100_000);
        long allocated = threads.getThreadAllocatedBytes(id) - before;

        // 200,000 picks; anything per pick would be megabytes. A few hundred bytes is the measuring itself.
        assertThat(allocated).as(policy.name()).isLessThan(4_096);
      }
    }

    @Test
    void powerOfTwoPicksBetweenMeasuredEndpointsAllocateNothing() {
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      Balancer balancer = balancer(BalancerConfig.builder().policy(Policy.POWER_OF_TWO).build(), ticker);
      balancer.update(set(instance("a"), instance("b"), instance("c")));
      int[] millis = {10, 11, 40}; // a and b tie within the noise, c is clearly slower: both branches of the duel
      for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 3; i++) {
          EndpointState e = endpoint(balancer, Character.toString('a' + i));
          e.started();
          e.finished(Duration.ofMillis(millis[i] + round % 3));
        }
        ticker.advance(Duration.ofMillis(50));
      }
      EndpointState a = endpoint(balancer, "a");
      long id = Thread.currentThread().getId();
      pickMany(balancer, a, 20_000); // warm up

      long before = threads.getThreadAllocatedBytes(id);
      pickMany(balancer, a, 100_000);
      long allocated = threads.getThreadAllocatedBytes(id) - before;

      assertThat(allocated).isLessThan(4_096);
    }

    @Test
    void picksWhileAnEndpointRampsAllocateNothing() {
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      for (Policy policy : Policy.values()) {
        Balancer balancer = balancer(BalancerConfig.builder().policy(policy).slowStart(Duration.ofSeconds(10))
            .build(), ticker);
        balancer.update(set(instance("a").weight(1), instance("b").weight(2)));
        balancer.update(set(instance("a").weight(1), instance("b").weight(2), instance("c").weight(3)));
        ticker.advance(Duration.ofSeconds(2)); // c ramps; the next pick rebuilds at this time, then none does
        EndpointState a = endpoint(balancer, "a");
        assertThat(endpoint(balancer, "c").isRamping()).as(policy.name()).isTrue();
        long id = Thread.currentThread().getId();
        pickMany(balancer, a, 20_000); // warm up, and the one rebuild

        long before = threads.getThreadAllocatedBytes(id);
        pickMany(balancer, a, 100_000);
        long allocated = threads.getThreadAllocatedBytes(id) - before;

        assertThat(allocated).as(policy.name()).isLessThan(4_096);
      }
    }

    private void pickMany(Balancer balancer, EndpointState avoid, int n) {
      for (int i = 0; i < n; i++) {
        if (balancer.pick() == null || balancer.pick(avoid) == null) {
          throw new AssertionError("no pick");
        }
      }
    }
  }
}
