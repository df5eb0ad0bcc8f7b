package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceOptionsTest {
  private static InstanceOptions options() {
    InstanceOptions options = new InstanceOptions();
    options.ttl = Duration.ofSeconds(15);
    return options;
  }

  @Test
  void theStartTimeoutComesFromTheFlagElseTheEnvironmentElseTenSeconds() {
    Map<String, String> env = Map.of("MUSTER_START_TIMEOUT", "45s");

    assertThat(options().registrar(Map.<String, String>of()::get).build().startTimeout())
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(options().registrar(env::get).build().startTimeout()).isEqualTo(Duration.ofSeconds(45));
    InstanceOptions flag = options();
    flag.startTimeout = Duration.ofSeconds(3);
    assertThat(flag.registrar(env::get).build().startTimeout()).as("the flag wins").isEqualTo(Duration.ofSeconds(3));
  }

  @Test
  void aStartTimeoutInTheEnvironmentThatIsNoDurationIsRefusedNamingTheVariable() {
    assertThatThrownBy(() -> options().registrar(Map.of("MUSTER_START_TIMEOUT", "soon")::get))
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("MUSTER_START_TIMEOUT")
        .hasMessageContaining("soon").hasMessageContaining("500ms, 3s or 2m");
  }
}
