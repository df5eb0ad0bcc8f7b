package dev.muster.bench.support;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SamplesTest {
  @Test
  void percentilesAreNearestRankOverTheSortedSamples() {
    Samples s = new Samples();
    for (int i = 100; i >= 1; i--) {
      s.add(i);
    }
    assertThat(s.p50()).isEqualTo(50);
    assertThat(s.p99()).isEqualTo(99);
    assertThat(s.max()).isEqualTo(100);
    assertThat(s.min()).isEqualTo(1);
    assertThat(s.percentile(1)).isEqualTo(1);
    assertThat(s.count()).isEqualTo(100);
  }

  @Test
  void withFewSamplesTheP99IsTheMaximum() {
    Samples s = new Samples();
    s.add(3);
    s.add(1);
    s.add(2);
    assertThat(s.p50()).isEqualTo(2);
    assertThat(s.p99()).isEqualTo(3);
  }

  @Test
  void nanosAreRecordedAsMilliseconds() {
    Samples s = new Samples();
    s.addNanos(2_500_000);
    assertThat(s.max()).isEqualTo(2.5);
  }

  @Test
  void noSamplesGiveNaNNotAnError() {
    assertThat(new Samples().p50()).isNaN();
  }
}
