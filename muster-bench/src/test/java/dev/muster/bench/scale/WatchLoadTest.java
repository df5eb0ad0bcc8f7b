package dev.muster.bench.scale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WatchLoadTest {
  private static final long SECOND = 1_000_000;

  /**
   * A storm read every 100 ms: 100 messages/s of progress requests until the kill at 2 s, nothing while etcd is
   * down, 5,000/s for the second after it answers at 7.5 s, 1,000/s until every cache caught up at 9 s, 100/s in the
   * tail; one stream per 10 messages.
   */
  private static List<WatchLoad.Reading> storm() {
    List<WatchLoad.Reading> readings = new ArrayList<>();
    for (long t = 0; t <= 10 * SECOND; t += SECOND / 10) {
      double messages = 100 * seconds(Math.min(t, 2 * SECOND))
          + 5_000 * seconds(clamp(t, 7_500_000, 8_500_000))
          + 1_000 * seconds(clamp(t, 8_500_000, 9 * SECOND))
          + 100 * seconds(clamp(t, 9 * SECOND, 10 * SECOND));
      long m = Math.round(messages);
      readings.add(new WatchLoad.Reading(t, m, m / 10));
    }
    return readings;
  }

  private static double seconds(long micros) {
    return micros / 1e6;
  }

  private static long clamp(long t, long from, long to) {
    return Math.max(0, Math.min(t, to) - from);
  }

  @Test
  void totalsCountFromTheKill() {
    WatchLoad w = WatchLoad.of(storm(), 2 * SECOND, 7_500_000, 9 * SECOND);
    assertThat(w.messages()).isEqualTo(5_000 + 500 + 100);
    assertThat(w.streams()).isEqualTo(560);
    assertThat(w.readings()).isEqualTo(101);
  }

  @Test
  void thePeakIsTheBusiestSecondBetweenTwoReadings() {
    WatchLoad w = WatchLoad.of(storm(), 2 * SECOND, 7_500_000, 9 * SECOND);
    assertThat(w.peakMessagesPerSecond()).isCloseTo(5_000, within(1e-9));
    assertThat(w.peakStreamsPerSecond()).isCloseTo(500, within(1e-9));
  }

  @Test
  void theMeanRunsFromWhenEtcdAnsweredUntilEveryCacheCaughtUp() {
    WatchLoad w = WatchLoad.of(storm(), 2 * SECOND, 7_500_000, 9 * SECOND);
    assertThat(w.recoverySeconds()).isCloseTo(1.5, within(1e-9));
    assertThat(w.meanMessagesPerSecond()).isCloseTo(5_500 / 1.5, within(1e-9));
  }

  @Test
  void instantsBetweenReadingsWidenTheRecoveryToTheReadingsAroundIt() {
    WatchLoad w = WatchLoad.of(storm(), 2 * SECOND, 7_550_000, 8_950_000);
    assertThat(w.recoverySeconds()).isCloseTo(1.5, within(1e-9));
  }

  @Test
  void noReadingsMeanNoFigures() {
    WatchLoad w = WatchLoad.of(List.of(), 0, 1, 2);
    assertThat(w.readings()).isZero();
    assertThat(w.peakMessagesPerSecond()).isNaN();
  }
}
