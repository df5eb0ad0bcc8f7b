package dev.muster.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.registry.Instance;
import org.junit.jupiter.api.Test;

class StormRunTest {
  @Test
  void theMarkersIdIsTheLabelInAnInstanceIdsAlphabet() {
    assertThat(StormRun.markerId("3 members: m0 2/5 (leader)")).isEqualTo("storm-3-members-m0-2-5-leader");
    assertThat(StormRun.markerId("direct, jitter on")).isEqualTo("storm-direct-jitter-on");
  }

  @Test
  void aLongLabelIsCutToALegalId() {
    String id = StormRun.markerId("x".repeat(100) + " y");
    assertThat(id).hasSizeLessThanOrEqualTo(63);
    Instance.of("scale", "127.0.0.1", 40_000).id(id); // throws when the id is not one, as below
    assertThatThrownBy(() -> Instance.of("scale", "127.0.0.1", 40_000).id("storm-3-members-m0-1-2-follower-"))
        .hasMessageContaining("is invalid");
  }
}
