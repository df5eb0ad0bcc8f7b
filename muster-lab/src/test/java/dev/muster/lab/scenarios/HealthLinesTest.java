package dev.muster.lab.scenarios;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A pause of every consumer's fixed-rate calls at once: the machine stalled. */
class HealthLinesTest {
  private static final Instant T = Instant.parse("2026-12-01T21:48:00Z");
  private static final Duration MIN = Duration.ofSeconds(1);

  @Test
  void theOverlapOfEachConsumersLongestGap() {
    List<Instant> k = List.of(at(0), at(50), at(100), at(13_990), at(14_040)); // 13.9 s gap
    List<Instant> f = List.of(at(0), at(60), at(14_050), at(14_100)); // 13.99 s gap
    List<Instant> other = List.of(at(0), at(2_000), at(2_050), at(14_000)); // two gaps: the longer one counts

    assertThat(HealthLines.commonGap(MIN, List.of(k, f, other))).hasValueSatisfying(
        g -> assertThat(g).containsExactly(at(2_050), at(13_990)));
  }

  @Test
  void noStallWhenOneConsumerKeptCallingOrTheGapsDoNotOverlap() {
    List<Instant> paused = List.of(at(0), at(1_500), at(1_550));
    List<Instant> steady = List.of(at(0), at(500), at(1_000), at(1_500));
    List<Instant> pausedLater = List.of(at(0), at(2_000), at(3_500));

    assertThat(HealthLines.commonGap(MIN, List.of(paused, steady))).isEmpty();
    assertThat(HealthLines.commonGap(MIN, List.of(List.of(at(0), at(1_200)), List.of(at(1_300), at(2_500)))))
        .isEmpty();
    assertThat(HealthLines.commonGap(MIN, List.of(paused, pausedLater))).hasValueSatisfying(
        g -> assertThat(g).containsExactly(at(0), at(1_500)));
  }

  private static Instant at(long ms) {
    return T.plusMillis(ms);
  }
}
