package dev.muster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

  @Test
  void readsTheFourUnitsOfSpecSection7AndWritesThemBack() {
    assertThat(Durations.parse("d", "500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("d", " 3s ")).isEqualTo(Duration.ofSeconds(3));
    assertThat(Durations.parse("d", "2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(Durations.parse("d", "1h")).isEqualTo(Duration.ofHours(1));
    assertThat(Durations.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(Durations.format(Duration.ofSeconds(120))).isEqualTo("2m");
  }

  @Test
  void refusesAnythingElseNamingTheField() {
    assertThatThrownBy(() -> Durations.parse("ttl", "3")).isInstanceOf(InvalidInputException.class)
        .hasMessage("ttl \"3\" is invalid: write a duration like 500ms, 3s or 2m");
    assertThatThrownBy(() -> Durations.parse("ttl", "-1s")).isInstanceOf(InvalidInputException.class);
    assertThatThrownBy(() -> Durations.parse("ttl", null)).isInstanceOf(InvalidInputException.class)
        .hasMessage("ttl is missing: write a duration like 500ms, 3s or 2m");
  }
}
