package dev.muster.balance;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The weighted pick's alias table gives each candidate exactly its share of the weight. */
class TierTest {
  private static EndpointState[] endpoints(int... weights) {
    EndpointState[] out = new EndpointState[weights.length];
    for (int i = 0; i < weights.length; i++) {
      out[i] = new EndpointState(TestEndpoints.instance("e" + i).weight(weights[i]), Duration.ofSeconds(10),
          () -> 0L);
    }
    return out;
  }

  private static void assertExact(Tier tier, int[] weights) {
    long[] numerators = tier.aliasProbabilityNumerators();
    for (int i = 0; i < weights.length; i++) {
      assertThat(numerators[i]).as("candidate %d of weight %d", i, weights[i]).isEqualTo((long) weights.length
          * weights[i]);
    }
  }

  @Test
  void everyCandidateGetsExactlyItsWeightsShareUnderTheAliasTable() {
    SplittableRandom random = new SplittableRandom(7);
    for (int trial = 0; trial < 500; trial++) {
      int n = 1 + random.nextInt(trial < 400 ? 12 : 3000);
      int[] weights = new int[n];
      for (int i = 0; i < n; i++) {
        weights[i] = random.nextInt(5) == 0 ? 0 : random.nextInt(10_001);
      }
      weights[random.nextInt(n)] = 1 + random.nextInt(10_000); // some positive weight
      assertExact(new Tier(endpoints(weights), null), weights);
    }
  }

  @Test
  void equalWeightsAndASingleCandidateNeedNoAlias() {
    assertExact(new Tier(endpoints(100, 100, 100, 100), null), new int[] {100, 100, 100, 100});
    assertExact(new Tier(endpoints(5), null), new int[] {5});
  }

  @Test
  void picksFollowTheWeightsAndNeverDrawAWeightZeroCandidate() {
    Tier tier = new Tier(endpoints(1, 0, 3, 6), null);
    SplittableRandom random = new SplittableRandom(1);
    int[] counts = new int[4];
    for (int i = 0; i < 100_000; i++) {
      String id = tier.pick(BalancerConfig.Policy.WEIGHTED_RANDOM, new AtomicLong(), random, null).instance().id();
      counts[id.charAt(1) - '0']++;
    }
    assertThat(counts[1]).isZero();
    assertThat(counts[0]).isBetween(9_000, 11_000);
    assertThat(counts[2]).isBetween(28_500, 31_500);
    assertThat(counts[3]).isBetween(58_500, 61_500);
  }
}
