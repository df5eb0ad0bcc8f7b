package dev.muster.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplacementsTest {
  private static Map<String, Long> stats(long acceptsAgain, long suspect, long down, long outvoted) {
    Map<String, Long> m = new LinkedHashMap<>();
    m.put("replaced.accepts_again", acceptsAgain);
    m.put("replaced.suspect", suspect);
    m.put("reports.down", down);
    m.put("reports.outvoted", outvoted);
    return m;
  }

  @Test
  void eachJvmsCountersOverTheStormAreAfterMinusBefore() {
    Replacements r = Replacements.between(List.of(stats(1, 0, 100, 0), stats(0, 0, 0, 0)),
        List.of(stats(2, 0, 2_600, 3), stats(1, 1, 2_400, 0)));
    assertThat(r.perJvm("replaced.accepts_again")).isEqualTo("1/1");
    assertThat(r.perJvm("replaced.suspect")).isEqualTo("0/1");
    assertThat(r.total("reports.down")).isEqualTo(4_900);
    assertThat(r.describe()).isEqualTo("replacements per JVM: 1/1 accepts_again, 0/1 suspect; failure reports:"
        + " 4,900 down, 3 outvoted");
  }

  @Test
  void aCounterMissingBeforeTheStormCountsFromZero() {
    Replacements r = Replacements.between(List.of(Map.of()), List.of(stats(1, 0, 5, 0)));
    assertThat(r.total("reports.down")).isEqualTo(5);
  }

  @Test
  void jvmsThatReportedNoCountersSaySo() {
    assertThat(Replacements.between(List.of(Map.of()), List.of(Map.of())).describe())
        .contains("reported no connection counters");
  }

  @Test
  void beforeAndAfterMustCoverTheSameJvms() {
    assertThatThrownBy(() -> Replacements.between(List.of(Map.of()), List.of())).hasMessageContaining("1 JVMs");
  }
}
