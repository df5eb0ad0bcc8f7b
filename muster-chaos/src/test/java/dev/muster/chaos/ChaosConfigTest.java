package dev.muster.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChaosConfigTest {
  private static ChaosConfig config(int schedules, int steps, int members, int parallel, Duration bound) {
    return new ChaosConfig(schedules, 1, List.of(), steps, members, parallel, bound, Path.of("out"), true, false);
  }

  @Test
  void badValuesAreRefusedNamingTheOptionAndWhatToUse() {
    assertThatThrownBy(() -> config(0, 20, 1, 4, Duration.ofSeconds(60))).isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("schedules").hasMessageContaining("1 to 100000");
    assertThatThrownBy(() -> config(1, 0, 1, 4, Duration.ofSeconds(60))).hasMessageContaining("steps");
    assertThatThrownBy(() -> config(1, 20, 2, 4, Duration.ofSeconds(60))).hasMessageContaining("members")
        .hasMessageContaining("1 or 3");
    assertThatThrownBy(() -> config(1, 20, 1, 0, Duration.ofSeconds(60))).hasMessageContaining("parallel");
    assertThatThrownBy(() -> config(1, 20, 1, 4, Duration.ofSeconds(1))).hasMessageContaining("bound");
  }

  @Test
  void explicitSeedsDecideHowManySchedulesRun() {
    ChaosConfig c = new ChaosConfig(0, 0, List.of(5L, 6L, 7L), 20, 3, 2, Duration.ofSeconds(60), Path.of("o"),
        false, false);

    assertThat(c.count()).isEqualTo(3);
    assertThat(c.scheduleSeeds()).containsExactly(5L, 6L, 7L);
    assertThat(config(17, 20, 1, 4, Duration.ofSeconds(60)).count()).isEqualTo(17);
  }

  @Test
  void withoutExplicitSeedsEachScheduleSeedFollowsTheOneBefore() {
    assertThat(config(3, 20, 1, 4, Duration.ofSeconds(60)).scheduleSeeds())
        .containsExactly(1L, Schedule.next(1), Schedule.next(Schedule.next(1)));
  }
}
