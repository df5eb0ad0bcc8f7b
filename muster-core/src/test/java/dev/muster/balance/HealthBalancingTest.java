package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.draining;
import static dev.muster.balance.TestEndpoints.ejectAll;
import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.picks;
import static dev.muster.balance.TestEndpoints.set;
import static dev.muster.balance.TestEndpoints.starting;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.health.HealthEvent;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.outlier.Outcome;
import dev.muster.registry.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The balancer's health inputs (issue 16): probe verdicts, the panic threshold, slow start and the stale policy's
 * restriction to recent successes. A fake ticker and a seeded random generator: deterministic.
 */
class HealthBalancingTest {
  private final FakeTicker ticker = new FakeTicker();
  private final List<HealthEvent> events = new ArrayList<>();

  private Balancer balancer(BalancerConfig config) {
    return balancer(config, OutlierConfig.defaults());
  }

  private Balancer balancer(BalancerConfig config, OutlierConfig outliers) {
    SplittableRandom random = new SplittableRandom(42);
    return new Balancer(config, new OutlierDetector(outliers, ticker), ticker, () -> random, null, "orders",
        events::add);
  }

  private static BalancerConfig policy(Policy policy) {
    return BalancerConfig.builder().policy(policy).build();
  }

  private static EndpointState state(Balancer balancer, String id) {
    return balancer.endpoints().stream().filter(s -> s.instance().id().equals(id)).findFirst().orElseThrow();
  }

  /** Each id probed down, as the Prober reports it: the verdict, then settled() with no lock held. */
  private static void down(Balancer balancer, String... ids) {
    for (String id : ids) {
      balancer.probeChanged(instance(id).key(), true);
      balancer.settled();
    }
  }

  private static void up(Balancer balancer, String... ids) {
    for (String id : ids) {
      balancer.probeChanged(instance(id).key(), false);
      balancer.settled();
    }
  }

  private static void eject(Balancer balancer, String id) {
    assertThat(balancer.detector().record(state(balancer, id).outlier(), Outcome.LOCAL_ORIGIN_FAILURE)).isTrue();
  }

  /** The share of {@code n} picks each id got. */
  private static Map<String, Double> shares(Balancer balancer, int n) {
    Map<String, Integer> counts = new HashMap<>();
    for (String id : picks(balancer, n)) {
      counts.merge(id, 1, Integer::sum);
    }
    Map<String, Double> shares = new HashMap<>();
    counts.forEach((id, c) -> shares.put(id, c / (double) n));
    return shares;
  }

  private List<HealthEvent.Type> eventTypes() {
    return events.stream().map(HealthEvent::type).toList();
  }

  private static Instance[] abcd() {
    return new Instance[] {instance("a"), instance("b"), instance("c"), instance("d")};
  }

  @Nested
  class ProbeVerdicts {
    @ParameterizedTest
    @EnumSource(Policy.class)
    void aProbeDownEndpointGetsNoPicksOutsidePanicAndComesBackWhenUp(Policy policy) {
      Balancer balancer = balancer(policy(policy));
      balancer.update(set(instance("a"), instance("b"), instance("c")));

      down(balancer, "b");

      assertThat(balancer.isPanicking()).as("2 of 3 routable is above 50 %").isFalse();
      assertThat(balancer.availableCount()).isEqualTo(2);
      assertThat(state(balancer, "b").isProbeDown()).isTrue();
      assertThat(state(balancer, "b").isAvailable()).isFalse();
      assertThat(picks(balancer, 600)).containsOnly("a", "c");

      up(balancer, "b");

      assertThat(balancer.availableCount()).isEqualTo(3);
      assertThat(picks(balancer, 600)).contains("a", "b", "c");
    }

    @Test
    void aVerdictOnAKeyNotInTheSetIsIgnored() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN));
      balancer.update(set(instance("a"), instance("b")));

      down(balancer, "zzz");

      assertThat(balancer.availableCount()).isEqualTo(2);
      assertThat(picks(balancer, 10)).contains("a", "b");
      assertThat(events).isEmpty();
    }

    @Test
    void aRetryAvoidingTheOnlyHealthyEndpointDoesNotGoToAProbeDownOne() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN));
      balancer.update(set(instance("a"), instance("b"), instance("c")));
      down(balancer, "c");

      EndpointState a = state(balancer, "a");
      for (int i = 0; i < 50; i++) {
        assertThat(balancer.pick(a).instance().id()).isEqualTo("b");
      }
    }
  }

  @Nested
  class PanicThreshold {
    @ParameterizedTest
    @EnumSource(Policy.class)
    void belowTheThresholdPicksGoAcrossEveryUpEndpoint(Policy policy) {
      Balancer balancer = balancer(policy(policy));
      balancer.update(set(abcd()));

      down(balancer, "b", "c", "d");

      assertThat(balancer.availableCount()).isEqualTo(1);
      assertThat(balancer.isPanicking()).as("1 of 4 is below 50 %").isTrue();
      assertThat(picks(balancer, 2000)).containsOnly("a", "b", "c", "d").contains("b", "c", "d");
    }

    @Test
    void exactlyTheThresholdIsNotBelowIt() {
      Balancer balancer = balancer(policy(Policy.WEIGHTED_RANDOM));
      balancer.update(set(abcd()));

      down(balancer, "c", "d");

      assertThat(balancer.availableCount()).isEqualTo(2);
      assertThat(balancer.isPanicking()).as("2 of 4 is 50 %, not below it").isFalse();
      assertThat(picks(balancer, 2000)).containsOnly("a", "b").contains("a", "b");
      assertThat(events).isEmpty();
    }

    @Test
    void aHigherThresholdPanicsSooner() {
      Balancer balancer = balancer(BalancerConfig.builder().policy(Policy.ROUND_ROBIN).healthyPanicThreshold(80)
          .build());
      balancer.update(set(abcd()));

      down(balancer, "d");

      assertThat(balancer.isPanicking()).as("3 of 4 is 75 %, below 80 %").isTrue();
      assertThat(picks(balancer, 40)).contains("d");
    }

    @Test
    void thresholdZeroPicksOnlyTheHealthyOneUntilNoneIsAvailable() {
      Balancer balancer = balancer(BalancerConfig.builder().policy(Policy.POWER_OF_TWO).healthyPanicThreshold(0)
          .build());
      balancer.update(set(abcd()));

      down(balancer, "b", "c", "d");

      assertThat(balancer.isPanicking()).isFalse();
      assertThat(picks(balancer, 500)).containsOnly("a");
      assertThat(events).isEmpty();

      down(balancer, "a");

      assertThat(balancer.availableCount()).isZero();
      assertThat(balancer.isPanicking()).as("none available: the last resort panic still applies").isTrue();
      assertThat(picks(balancer, 2000)).containsOnly("a", "b", "c", "d").contains("a", "b", "c", "d");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PANIC_ON);
    }

    @Test
    void withPanicRoutingOffNothingPanicsAndAnAllDownSetHasNoPick() {
      Balancer balancer = balancer(BalancerConfig.builder().policy(Policy.ROUND_ROBIN).panicRouting(false).build());
      balancer.update(set(abcd()));

      down(balancer, "b", "c", "d");

      assertThat(balancer.isPanicking()).as("1 of 4, but panic routing is off").isFalse();
      assertThat(picks(balancer, 40)).containsOnly("a");

      down(balancer, "a");

      assertThat(balancer.isPanicking()).isFalse();
      assertThat(balancer.pick()).isNull();
      assertThat(balancer.pick(state(balancer, "a"))).isNull();
      assertThat(events).isEmpty();
    }

    @Test
    void withPanicRoutingOffAnAllDrainingSetHasNoPickEither() {
      Balancer balancer = balancer(BalancerConfig.builder().panicRouting(false).build());
      balancer.update(set(draining("a"), draining("b")));

      assertThat(balancer.isPanicking()).isFalse();
      assertThat(balancer.pick()).isNull();
    }

    @Test
    void ejectionAndProbesCountTogether() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN), ejectAll());
      balancer.update(set(abcd()));

      eject(balancer, "a");
      assertThat(balancer.isPanicking()).isFalse();
      down(balancer, "b");
      assertThat(balancer.isPanicking()).isFalse();
      down(balancer, "c");

      assertThat(balancer.availableCount()).isEqualTo(1);
      assertThat(balancer.isPanicking()).isTrue();
      assertThat(picks(balancer, 40)).containsOnly("a", "b", "c", "d");
    }

    @Test
    void panicOnAndOffAreReportedOncePerTransition() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN));
      balancer.update(set(abcd()));

      down(balancer, "b", "c");
      assertThat(events).isEmpty();
      down(balancer, "d");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PANIC_ON);
      HealthEvent on = events.get(0);
      assertThat(on.service()).isEqualTo("orders");
      assertThat(on.instance()).isNull();
      assertThat(on.detail()).contains("1 of 4 UP endpoints routable").contains("50 %");

      down(balancer, "a"); // from threshold panic to none-available panic: still panic
      up(balancer, "a");
      picks(balancer, 100);
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), instance("e"))); // 2 of 5
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PANIC_ON);

      up(balancer, "d");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PANIC_ON, HealthEvent.Type.PANIC_OFF);
      assertThat(events.get(1).detail()).contains("3 of 5 UP endpoints routable");
      up(balancer, "c");
      picks(balancer, 100);
      assertThat(events).hasSize(2);

      down(balancer, "a", "c", "d");
      assertThat(eventTypes()).containsExactly(HealthEvent.Type.PANIC_ON, HealthEvent.Type.PANIC_OFF,
          HealthEvent.Type.PANIC_ON);
    }

    @Test
    void startingAndDrainingEndpointsNeverCountAsRoutableNorArePickedInThresholdPanic() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN));
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), starting("s"),
          draining("r")));
      assertThat(balancer.availableCount()).isEqualTo(4);

      down(balancer, "b", "c", "d");

      assertThat(balancer.availableCount()).isEqualTo(1);
      assertThat(balancer.isPanicking()).isTrue();
      assertThat(picks(balancer, 600)).containsOnly("a", "b", "c", "d");
    }

    @Test
    void theThresholdIsAShareOfTheUpEndpointsOnly() {
      Balancer balancer = balancer(policy(Policy.WEIGHTED_RANDOM));
      balancer.update(set(instance("a"), instance("b"), starting("s"), starting("t"), draining("r"),
          draining("q")));

      assertThat(balancer.availableCount()).isEqualTo(2);
      assertThat(balancer.isPanicking()).as("2 of 2 UP are routable; STARTING and DRAINING are not counted")
          .isFalse();
      assertThat(picks(balancer, 600)).containsOnly("a", "b");

      down(balancer, "b");

      assertThat(balancer.isPanicking()).as("1 of 2 is 50 %, not below").isFalse();
      assertThat(picks(balancer, 600)).containsOnly("a");
    }
  }

  @Nested
  class SlowStartFactor {
    private final long second = 1_000_000_000L;

    private BalancerConfig window(Duration window, double aggression, int minPercent) {
      return BalancerConfig.builder().slowStart(window, aggression, minPercent).build();
    }

    @Test
    void offIsAlwaysOne() {
      BalancerConfig off = BalancerConfig.defaults();
      assertThat(off.slowStartWindow()).isZero();
      assertThat(off.slowStartFactor(0)).isEqualTo(1.0);
      assertThat(off.slowStartFactor(5 * second)).isEqualTo(1.0);
    }

    @Test
    void theDefaultsAreEnvoys() {
      BalancerConfig c = BalancerConfig.builder().slowStart(Duration.ofSeconds(30)).build();
      assertThat(c.slowStartAggression()).isEqualTo(1.0);
      assertThat(c.slowStartMinWeightPercent()).isEqualTo(10);
      assertThat(BalancerConfig.defaults().healthyPanicThreshold()).isEqualTo(50);
    }

    @Test
    void theFirstSecondCountsAsOneSecond() {
      BalancerConfig c = window(Duration.ofSeconds(4), 1.0, 1);
      assertThat(c.slowStartFactor(0)).isCloseTo(0.25, within(1e-9));
      assertThat(c.slowStartFactor(second / 2)).isCloseTo(0.25, within(1e-9));
      assertThat(c.slowStartFactor(second)).isCloseTo(0.25, within(1e-9));
      assertThat(c.slowStartFactor(2 * second)).isCloseTo(0.5, within(1e-9));
    }

    @Test
    void atTheStartTheMinWeightWinsOverOneSecondOfALongWindow() {
      BalancerConfig c = window(Duration.ofSeconds(100), 1.0, 10);
      assertThat(c.slowStartFactor(0)).isCloseTo(0.1, within(1e-9)); // max(0.1, 1/100)
      assertThat(c.slowStartFactor(second / 3)).isCloseTo(0.1, within(1e-9));
    }

    @Test
    void aggressionOneIsLinear() {
      BalancerConfig c = window(Duration.ofSeconds(10), 1.0, 10);
      assertThat(c.slowStartFactor(0)).isCloseTo(0.1, within(1e-9));
      assertThat(c.slowStartFactor(2_500_000_000L)).isCloseTo(0.25, within(1e-9));
      assertThat(c.slowStartFactor(5 * second)).isCloseTo(0.5, within(1e-9));
      assertThat(c.slowStartFactor(7_500_000_000L)).isCloseTo(0.75, within(1e-9));
      assertThat(c.slowStartFactor(10 * second)).isEqualTo(1.0);
      assertThat(c.slowStartFactor(60 * second)).isEqualTo(1.0);
    }

    @Test
    void aggressionTwoIsTheSquareRoot() {
      BalancerConfig c = window(Duration.ofSeconds(16), 2.0, 1);
      assertThat(c.slowStartFactor(4 * second)).isCloseTo(0.5, within(1e-9));
      assertThat(c.slowStartFactor(9 * second)).isCloseTo(0.75, within(1e-9));
      assertThat(c.slowStartFactor(second)).isCloseTo(0.25, within(1e-9));
      assertThat(c.slowStartFactor(16 * second)).isEqualTo(1.0);
    }

    @Test
    void theMinWeightIsAFloor() {
      BalancerConfig c = window(Duration.ofSeconds(10), 1.0, 30);
      assertThat(c.slowStartFactor(2 * second)).isCloseTo(0.3, within(1e-9));
      assertThat(c.slowStartFactor(3 * second)).isCloseTo(0.3, within(1e-9));
      assertThat(c.slowStartFactor(5 * second)).isCloseTo(0.5, within(1e-9));
      BalancerConfig slow = window(Duration.ofSeconds(10), 0.5, 20); // quadratic: 0.5^2 = 0.25
      assertThat(slow.slowStartFactor(5 * second)).isCloseTo(0.25, within(1e-9));
      assertThat(slow.slowStartFactor(4 * second)).isCloseTo(0.2, within(1e-9)); // 0.16 floored to 0.2
    }

    @Test
    void theFactorNeverDecreasesOverTheWindow() {
      BalancerConfig c = window(Duration.ofSeconds(30), 1.5, 5);
      double last = 0;
      for (long t = 0; t <= 31 * second; t += second / 4) {
        double f = c.slowStartFactor(t);
        assertThat(f).isBetween(0.05, 1.0).isGreaterThanOrEqualTo(last);
        last = f;
      }
      assertThat(last).isEqualTo(1.0);
    }
  }

  @Nested
  class Config {
    @Test
    void thePanicThresholdIsAPercent() {
      assertThat(BalancerConfig.builder().healthyPanicThreshold(0).build().healthyPanicThreshold()).isZero();
      assertThat(BalancerConfig.builder().healthyPanicThreshold(100).build().healthyPanicThreshold()).isEqualTo(100);
      for (int bad : new int[] {-1, 101}) {
        assertThatThrownBy(() -> BalancerConfig.builder().healthyPanicThreshold(bad).build())
            .isInstanceOf(InvalidInputException.class)
            .hasMessageContaining("healthyPanicThreshold").hasMessageContaining("use 0 (off) to 100 percent");
      }
    }

    @Test
    void slowStartValuesAreChecked() {
      assertThatThrownBy(() -> BalancerConfig.builder().slowStart(Duration.ofSeconds(-1)).build())
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("slowStartWindow")
          .hasMessageContaining("use zero (off) or a positive duration");
      assertThatThrownBy(() -> BalancerConfig.builder().slowStart(null).build())
          .isInstanceOf(InvalidInputException.class).hasMessageContaining("slowStartWindow");
      for (double bad : new double[] {0.0, -1.0, Double.NaN, Double.POSITIVE_INFINITY}) {
        assertThatThrownBy(() -> BalancerConfig.builder().slowStart(Duration.ofSeconds(10), bad, 10).build())
            .as("aggression %s", bad)
            .isInstanceOf(InvalidInputException.class).hasMessageContaining("slowStartAggression")
            .hasMessageContaining("use a positive number");
      }
      for (int bad : new int[] {0, 101}) {
        assertThatThrownBy(() -> BalancerConfig.builder().slowStart(Duration.ofSeconds(10), 1.0, bad).build())
            .isInstanceOf(InvalidInputException.class).hasMessageContaining("slowStartMinWeightPercent")
            .hasMessageContaining("use 1 to 100");
      }
    }

    @Test
    void toBuilderKeepsTheHealthFields() {
      BalancerConfig c = BalancerConfig.builder().healthyPanicThreshold(70)
          .slowStart(Duration.ofSeconds(45), 2.5, 25).panicRouting(false).build();
      assertThat(c.toBuilder().build()).isEqualTo(c);
      assertThat(BalancerConfig.defaults().panicRouting()).isTrue();
    }
  }

  @Nested
  class SlowStart {
    private final Duration window = Duration.ofSeconds(10);

    private Balancer slowStart(Policy policy) {
      return balancer(BalancerConfig.builder().policy(policy).slowStart(window).build(), ejectAll());
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void aJoiningEndpointsShareRampsOverTheWindow(Policy policy) {
      Balancer balancer = slowStart(policy);
      balancer.update(set(abcd()));
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), instance("e")));
      assertThat(state(balancer, "e").isRamping()).isTrue();
      assertThat(state(balancer, "a").isRamping()).isFalse();

      double fair = 1.0 / 5;
      double last = 0;
      long at = 0;
      for (long ms : new long[] {0, 2_500, 5_000, 7_500}) {
        ticker.advance(Duration.ofMillis(ms - at));
        at = ms;
        double factor = balancer.config().slowStartFactor(Duration.ofMillis(ms).toNanos());
        double share = shares(balancer, 20_000).getOrDefault("e", 0.0);
        assertThat(share).as("%s at %d ms: factor %.2f", policy, ms, factor)
            .isBetween(factor * fair * 0.6, factor * fair * 1.5);
        assertThat(share).as("%s at %d ms grows", policy, ms).isGreaterThan(last);
        last = share;
      }

      ticker.advance(Duration.ofMillis(2_500).plus(window.dividedBy(50)));
      double full = shares(balancer, 20_000).getOrDefault("e", 0.0);
      assertThat(full).as("%s after the window", policy).isCloseTo(fair, within(0.04));
      assertThat(state(balancer, "e").isRamping()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void theFirstSetsEndpointsDoNotRamp(Policy policy) {
      Balancer balancer = slowStart(policy);
      balancer.update(set(abcd()));

      assertThat(balancer.endpoints()).noneMatch(EndpointState::isRamping);
      Map<String, Double> shares = shares(balancer, 20_000);
      assertThat(shares).containsOnlyKeys("a", "b", "c", "d");
      assertThat(shares.values()).allSatisfy(s -> assertThat(s).isCloseTo(0.25, within(0.04)));
    }

    @Test
    void anEmptyFirstSetDoesNotCountAsTheFirst() {
      Balancer balancer = slowStart(Policy.WEIGHTED_RANDOM);
      balancer.update(set());
      balancer.update(set(abcd()));

      assertThat(balancer.endpoints()).noneMatch(EndpointState::isRamping);
    }

    @Test
    void slowStartDoneIsReportedOnceAfterTheWindow() {
      Balancer balancer = slowStart(Policy.ROUND_ROBIN);
      balancer.update(set(abcd()));
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), instance("e")));

      for (int i = 0; i < 49; i++) {
        ticker.advance(window.dividedBy(50));
        picks(balancer, 5);
      }
      ticker.advance(window.dividedBy(100)); // 9.9 s
      picks(balancer, 5);
      assertThat(events).isEmpty();
      assertThat(state(balancer, "e").isRamping()).isTrue();

      ticker.advance(window.dividedBy(20));
      picks(balancer, 5);

      assertThat(eventTypes()).containsExactly(HealthEvent.Type.SLOW_START_DONE);
      assertThat(events.get(0).instance()).isEqualTo("e");
      assertThat(events.get(0).service()).isEqualTo("orders");
      assertThat(state(balancer, "e").isRamping()).isFalse();

      ticker.advance(window.multipliedBy(3));
      picks(balancer, 50);
      assertThat(events).hasSize(1);
    }

    @Test
    void anUnejectedEndpointRampsAgain() {
      Balancer balancer = slowStart(Policy.WEIGHTED_RANDOM);
      balancer.update(set(abcd()));
      eject(balancer, "b");
      assertThat(picks(balancer, 200)).doesNotContain("b");

      ticker.advance(Duration.ofSeconds(30)); // ejectAll's base ejection time
      double share = shares(balancer, 20_000).getOrDefault("b", 0.0);

      assertThat(state(balancer, "b").isEjected()).isFalse();
      assertThat(state(balancer, "b").isRamping()).isTrue();
      assertThat(share).as("about 10 %% of a quarter").isBetween(0.25 * 0.1 * 0.6, 0.25 * 0.1 * 1.5);
    }

    @Test
    void aProbeUpEndpointRampsAgain() {
      Balancer balancer = slowStart(Policy.POWER_OF_TWO);
      balancer.update(set(abcd()));
      down(balancer, "c");
      ticker.advance(Duration.ofSeconds(60));

      up(balancer, "c");
      ticker.advance(Duration.ofSeconds(5));
      double share = shares(balancer, 20_000).getOrDefault("c", 0.0);

      assertThat(state(balancer, "c").isRamping()).isTrue();
      assertThat(share).as("half of a quarter at half the window").isBetween(0.25 * 0.5 * 0.6, 0.25 * 0.5 * 1.5);
    }

    @Test
    void anEndpointThatTurnsUpFromStartingRamps() {
      Balancer balancer = slowStart(Policy.ROUND_ROBIN);
      balancer.update(set(instance("a"), instance("b"), instance("c"), starting("d")));

      balancer.update(set(abcd()));

      assertThat(state(balancer, "d").isRamping()).isTrue();
      assertThat(shares(balancer, 20_000).getOrDefault("d", 0.0)).isBetween(0.25 * 0.1 * 0.6, 0.25 * 0.1 * 1.5);
    }

    @Test
    void aRampingEndpointTakesItsFullShareInPanic() {
      Balancer balancer = slowStart(Policy.ROUND_ROBIN);
      balancer.update(set(abcd()));
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), instance("e")));

      down(balancer, "a", "b", "c"); // 2 of 5 routable: panic, local judgement (the ramp included) ignored

      assertThat(balancer.isPanicking()).isTrue();
      assertThat(shares(balancer, 10_000).getOrDefault("e", 0.0)).isCloseTo(0.2, within(0.03));
    }

    @Test
    void slowStartOffNeverRamps() {
      Balancer balancer = balancer(policy(Policy.ROUND_ROBIN), ejectAll());
      balancer.update(set(abcd()));
      balancer.update(set(instance("a"), instance("b"), instance("c"), instance("d"), instance("e")));

      assertThat(state(balancer, "e").isRamping()).isFalse();
      assertThat(shares(balancer, 10_000).getOrDefault("e", 0.0)).isCloseTo(0.2, within(0.01));
    }
  }

  @Nested
  class RecentSuccess {
    private Balancer balancer;

    private void outcome(String id, boolean ok) {
      balancer.outcome(state(balancer, id), ok);
      ticker.advance(Duration.ofMillis(1)); // distinct stamps
    }

    private void setUp(Policy policy) {
      balancer = balancer(policy(policy));
      balancer.update(set(abcd()));
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void onlyEndpointsWhoseLastOutcomeSucceededWithinTheWindowArePicked(Policy policy) {
      setUp(policy);
      outcome("d", true); // succeeded, but long ago
      ticker.advance(Duration.ofSeconds(40));
      outcome("a", true);
      outcome("b", false);
      outcome("c", true);
      outcome("c", false); // last outcome failed
      outcome("a", false);
      outcome("a", true); // last outcome succeeded

      balancer.restrictToRecentSuccess(Duration.ofSeconds(30));

      assertThat(balancer.isRestrictedToRecentSuccess()).isTrue();
      assertThat(picks(balancer, 500)).containsOnly("a");
    }

    @Test
    void noRecentSuccessAtAllFallsBackToEveryEndpoint() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", false);
      outcome("b", false);

      balancer.restrictToRecentSuccess(Duration.ofSeconds(30));

      assertThat(balancer.isRestrictedToRecentSuccess()).isTrue();
      assertThat(picks(balancer, 40)).containsOnly("a", "b", "c", "d").contains("a", "b", "c", "d");
    }

    @Test
    void aFailureWhileRestrictedTakesTheEndpointOutAtOnce() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", true);
      outcome("b", true);
      balancer.restrictToRecentSuccess(Duration.ofSeconds(30));
      assertThat(picks(balancer, 40)).containsOnly("a", "b").contains("a", "b");

      outcome("a", false);

      assertThat(picks(balancer, 40)).containsOnly("b");

      outcome("b", false);
      assertThat(picks(balancer, 40)).as("none left: every endpoint again").contains("a", "b", "c", "d");
    }

    @Test
    void aSuccessAgesOutOfTheWindowWithoutAnyOtherChange() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", true);
      ticker.advance(Duration.ofSeconds(5));
      outcome("b", true);
      balancer.restrictToRecentSuccess(Duration.ofSeconds(10));
      assertThat(picks(balancer, 40)).containsOnly("a", "b").contains("a", "b");

      ticker.advance(Duration.ofSeconds(6)); // a's success is 11 s old, b's 6 s

      assertThat(picks(balancer, 40)).containsOnly("b");
    }

    @Test
    void nullLiftsTheRestriction() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", true);
      balancer.restrictToRecentSuccess(Duration.ofSeconds(30));
      assertThat(picks(balancer, 40)).containsOnly("a");

      balancer.restrictToRecentSuccess(null);

      assertThat(balancer.isRestrictedToRecentSuccess()).isFalse();
      assertThat(picks(balancer, 40)).containsOnly("a", "b", "c", "d").contains("a", "b", "c", "d");
    }

    @Test
    void outcomesOutsideTheRestrictionDoNotChangePicks() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", true);
      outcome("b", false);

      assertThat(balancer.isRestrictedToRecentSuccess()).isFalse();
      assertThat(picks(balancer, 40)).contains("a", "b", "c", "d");
    }

    @Test
    void theRestrictionStillLeavesProbeDownEndpointsOut() {
      setUp(Policy.ROUND_ROBIN);
      outcome("a", true);
      outcome("b", true);
      outcome("c", true);
      down(balancer, "c");

      balancer.restrictToRecentSuccess(Duration.ofSeconds(30));

      assertThat(picks(balancer, 60)).containsOnly("a", "b");
    }
  }

  @Test
  void aListenerThatThrowsDoesNotStopTheBalancer() {
    SplittableRandom random = new SplittableRandom(1);
    Balancer balancer = new Balancer(policy(Policy.ROUND_ROBIN), new OutlierDetector(OutlierConfig.defaults(),
        ticker), ticker, () -> random, null, "orders", e -> {
          throw new IllegalStateException("listener bug");
        });
    balancer.update(set(abcd()));

    down(balancer, "a", "b", "c");
    up(balancer, "a", "b");

    assertThat(balancer.isPanicking()).isFalse();
    assertThat(picks(balancer, 30)).containsOnly("a", "b", "d");
  }
}
