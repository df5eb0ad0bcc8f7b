package dev.muster.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConsoleConfigTest {
  @Test
  void defaultsAreLoopbackReadOnlyAndEtcdsQuota() {
    ConsoleConfig c = ConsoleConfig.defaults();
    assertThat(c.listen().getAddress().isLoopbackAddress()).isTrue();
    assertThat(c.listen().getPort()).isEqualTo(8080);
    assertThat(c.allowDrain()).isFalse();
    assertThat(c.namespaces()).isEmpty();
    assertThat(c.quota()).isEqualTo(2L * 1024 * 1024 * 1024);
    assertThat(c.toBuilder().build()).isEqualTo(c);
  }

  @Test
  void badValuesAreNamed() {
    assertThatThrownBy(() -> ConsoleConfig.builder().namespaces(List.of("Bad_ns")).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("Bad_ns");
    assertThatThrownBy(() -> ConsoleConfig.builder().quota(0).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("quota");
    assertThatThrownBy(() -> ConsoleConfig.builder().leaseRefresh(Duration.ZERO).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("leaseRefresh");
  }
}
