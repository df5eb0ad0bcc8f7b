package dev.muster.balance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig.Policy;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class BalancerConfigTest {
  @Test
  void theDefaultsArePowerOfTwoWithoutAZone() {
    BalancerConfig config = BalancerConfig.defaults();

    assertThat(config.policy()).isEqualTo(Policy.POWER_OF_TWO);
    assertThat(config.localZone()).isNull();
    assertThat(config.minLocalShare()).isEqualTo(0.5);
    assertThat(config.ewmaDecay()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void toBuilderRoundTrips() {
    BalancerConfig config = BalancerConfig.builder().policy(Policy.ROUND_ROBIN).localZone("eu-1a").build();

    assertThat(config.toBuilder().build()).isEqualTo(config);
  }

  @Test
  void rejectsAShareAboveOneNamingIt() {
    assertThatThrownBy(() -> BalancerConfig.builder().minLocalShare(1.5).build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("minLocalShare 1.5 is invalid: use a share from 0.0 to 1.0");
  }

  @Test
  void rejectsAnInvalidZoneNamingIt() {
    assertThatThrownBy(() -> BalancerConfig.builder().localZone("EU_1").build())
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("localZone \"EU_1\" is invalid");
  }

  @Test
  void rejectsAMissingPolicyAndAZeroDecay() {
    assertThatThrownBy(() -> BalancerConfig.builder().policy(null).build())
        .hasMessage("policy is missing: use ROUND_ROBIN, WEIGHTED_RANDOM or POWER_OF_TWO");
    assertThatThrownBy(() -> BalancerConfig.builder().ewmaDecay(Duration.ZERO).build())
        .hasMessage("ewmaDecay PT0S is invalid: use a positive duration");
  }
}
