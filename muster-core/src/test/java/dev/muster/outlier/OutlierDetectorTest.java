package dev.muster.outlier;

import static dev.muster.outlier.Outcome.HTTP_5XX;
import static dev.muster.outlier.Outcome.LOCAL_ORIGIN_FAILURE;
import static dev.muster.outlier.Outcome.SUCCESS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.balance.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class OutlierDetectorTest {
  private final FakeTicker ticker = new FakeTicker();
  private final Pool pool = new Pool();

  /** A pool of {@code n} hosts that counts the ejection changes it is told of. */
  private static final class Pool implements OutlierDetector.Pool {
    final List<OutlierState> hosts = new ArrayList<>();
    int changes;

    Pool withHosts(int n) {
      for (int i = 0; i < n; i++) {
        hosts.add(new OutlierState());
      }
      return this;
    }

    @Override
    public List<OutlierState> hosts() {
      return hosts;
    }

    @Override
    public void ejectionsChanged() {
      changes++;
    }
  }

  private OutlierDetector detector(OutlierConfig config, int hosts) {
    OutlierDetector detector = new OutlierDetector(config, ticker);
    detector.attach(pool.withHosts(hosts));
    return detector;
  }

  private OutlierState host(int i) {
    return pool.hosts.get(i);
  }

  private static void record(OutlierDetector detector, OutlierState host, Outcome outcome, int times) {
    for (int i = 0; i < times; i++) {
      detector.record(host, outcome);
    }
  }

  private Duration remainingEjection(OutlierState host) {
    return Duration.ofNanos(host.ejectedUntilNanos() - ticker.getAsLong());
  }

  @Nested
  class Ejecting {
    @Test
    void oneLocalOriginFailureEjectsWithTheDefaults() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 4);

      assertThat(detector.record(host(0), LOCAL_ORIGIN_FAILURE)).isTrue();

      assertThat(host(0).isEjected()).isTrue();
      assertThat(remainingEjection(host(0))).isEqualTo(Duration.ofSeconds(30));
      assertThat(detector.ejections()).isEqualTo(1);
      assertThat(detector.ejectionsLocalOrigin()).isEqualTo(1);
      assertThat(detector.activeEjections()).isEqualTo(1);
      assertThat(pool.changes).isEqualTo(1);
    }

    @Test
    void theFifthConsecutive5xxEjectsAndTheFourthDoesNot() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 4);

      record(detector, host(0), HTTP_5XX, 4);
      assertThat(host(0).isEjected()).isFalse();
      assertThat(host(0).consecutive5xx()).isEqualTo(4);

      assertThat(detector.record(host(0), HTTP_5XX)).isTrue();
      assertThat(detector.ejections5xx()).isEqualTo(1);
    }

    @Test
    void theConfiguredNumberOfLocalOriginFailuresEjects() {
      OutlierDetector detector = detector(OutlierConfig.builder().consecutiveLocalOriginFailure(3).build(), 4);

      record(detector, host(0), LOCAL_ORIGIN_FAILURE, 2);
      assertThat(host(0).isEjected()).isFalse();
      detector.record(host(0), LOCAL_ORIGIN_FAILURE);
      assertThat(host(0).isEjected()).isTrue();
    }

    @Test
    void aSuccessResetsTheCounts() {
      OutlierDetector detector = detector(OutlierConfig.builder().consecutiveLocalOriginFailure(2).build(), 4);

      record(detector, host(0), HTTP_5XX, 4);
      detector.record(host(0), LOCAL_ORIGIN_FAILURE);
      detector.record(host(0), SUCCESS);
      record(detector, host(0), HTTP_5XX, 4);

      assertThat(host(0).isEjected()).isFalse();
      assertThat(host(0).consecutive5xx()).isEqualTo(4);
    }

    @Test
    void a5xxResetsTheLocalOriginCountBecauseTheConnectionWorked() {
      OutlierDetector detector = detector(OutlierConfig.builder().consecutiveLocalOriginFailure(2).build(), 4);

      detector.record(host(0), LOCAL_ORIGIN_FAILURE);
      detector.record(host(0), HTTP_5XX);
      detector.record(host(0), LOCAL_ORIGIN_FAILURE);

      assertThat(host(0).isEjected()).isFalse();
    }

    @Test
    void aDisabledDetectorNeverEjects() {
      OutlierDetector detector = detector(OutlierConfig.builder().enabled(false).build(), 4);

      record(detector, host(0), LOCAL_ORIGIN_FAILURE, 100);

      assertThat(host(0).isEjected()).isFalse();
      assertThat(detector.ejections()).isZero();
    }

    @Test
    void aHostNoLongerInThePoolIsNotEjected() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 2);

      assertThat(detector.record(new OutlierState(), LOCAL_ORIGIN_FAILURE)).isFalse();
      assertThat(pool.changes).isZero();
    }

    @Test
    void recordingBeforeAttachingIsAnError() {
      OutlierDetector detector = new OutlierDetector(OutlierConfig.defaults(), ticker);

      assertThatThrownBy(() -> detector.record(new OutlierState(), LOCAL_ORIGIN_FAILURE))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not attached");
    }
  }

  @Nested
  class EjectionTime {
    private final OutlierConfig config = OutlierConfig.builder()
        .baseEjectionTime(Duration.ofSeconds(30)).maxEjectionTime(Duration.ofSeconds(100)).build();

    /** Ejects host 0, waits out the ejection, un-ejects it; returns how long the ejection was. */
    private Duration ejectAndWaitOut(OutlierDetector detector) {
      assertThat(detector.record(host(0), LOCAL_ORIGIN_FAILURE)).isTrue();
      Duration length = remainingEjection(host(0));
      ticker.advance(length);
      assertThat(detector.unejectDue(pool.hosts)).isTrue();
      return length;
    }

    @Test
    void theEjectionTimeIsTheBaseTimesTheEjectionsInARowUpToTheCap() {
      OutlierDetector detector = detector(config, 4);

      List<Duration> lengths = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        lengths.add(ejectAndWaitOut(detector));
      }

      assertThat(lengths).containsExactly(Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(90),
          Duration.ofSeconds(100), Duration.ofSeconds(100));
      assertThat(host(0).timesEjected()).isEqualTo(4);
    }

    @Test
    void theMultiplierLosesOneForEachBaseTimeSpentHealthy() {
      OutlierDetector detector = detector(config, 4);
      ejectAndWaitOut(detector);
      ejectAndWaitOut(detector);
      ejectAndWaitOut(detector); // 90 s; multiplier 3

      ticker.advance(Duration.ofSeconds(65)); // two base times healthy

      assertThat(ejectAndWaitOut(detector)).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void aHostIsNotUnejectedBeforeItsTimeAndItsCountsStartAfresh() {
      OutlierDetector detector = detector(OutlierConfig.builder().consecutive5xx(2).build(), 4);
      detector.record(host(0), LOCAL_ORIGIN_FAILURE);
      record(detector, host(0), HTTP_5XX, 1);

      ticker.advance(Duration.ofSeconds(29));
      assertThat(detector.unejectDue(pool.hosts)).isFalse();
      ticker.advance(Duration.ofSeconds(1));
      assertThat(detector.unejectDue(pool.hosts)).isTrue();

      assertThat(host(0).isEjected()).isFalse();
      assertThat(host(0).consecutive5xx()).isZero();
      assertThat(host(0).consecutiveLocalOriginFailures()).isZero();
    }
  }

  @Nested
  class MaxEjectionPercent {
    @Test
    void noMoreThanHalfOfTheHostsAreEjectedWithTheDefaults() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 4);

      for (int i = 0; i < 4; i++) {
        detector.record(host(i), LOCAL_ORIGIN_FAILURE);
      }

      assertThat(detector.activeEjections()).isEqualTo(2);
      assertThat(host(2).isEjected()).isFalse();
      assertThat(host(3).isEjected()).isFalse();
      assertThat(detector.ejectionsOverflow()).isEqualTo(2);
    }

    @Test
    void aRefusedHostIsEjectedAtItsNextFailureOnceThereIsRoom() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 2);
      detector.record(host(0), LOCAL_ORIGIN_FAILURE);
      assertThat(detector.record(host(1), LOCAL_ORIGIN_FAILURE)).isFalse();

      ticker.advance(Duration.ofSeconds(30));
      detector.unejectDue(pool.hosts);

      assertThat(detector.record(host(1), LOCAL_ORIGIN_FAILURE)).isTrue();
    }

    @Test
    void oneHostMayAlwaysBeEjectedWhateverThePercent() {
      OutlierDetector detector = detector(OutlierConfig.builder().maxEjectionPercent(10).build(), 3);

      assertThat(detector.record(host(0), LOCAL_ORIGIN_FAILURE)).isTrue();
      assertThat(detector.record(host(1), LOCAL_ORIGIN_FAILURE)).isFalse();
    }

    @Test
    void theOnlyHostOfAPoolMayBeEjected() {
      OutlierDetector detector = detector(OutlierConfig.defaults(), 1);

      assertThat(detector.record(host(0), LOCAL_ORIGIN_FAILURE)).isTrue();
    }

    @Test
    void aHundredPercentAllowsEveryHostToBeEjected() {
      OutlierDetector detector = detector(OutlierConfig.builder().maxEjectionPercent(100).build(), 3);

      for (int i = 0; i < 3; i++) {
        assertThat(detector.record(host(i), LOCAL_ORIGIN_FAILURE)).isTrue();
      }
    }
  }

  @Test
  void oneDetectorServesOnePool() {
    OutlierDetector detector = detector(OutlierConfig.defaults(), 1);

    assertThatThrownBy(() -> detector.attach(new Pool()))
        .isInstanceOf(IllegalStateException.class);
  }
}
