package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.instance;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class EndpointStateTest {
  private final FakeTicker ticker = new FakeTicker();
  private final EndpointState state = new EndpointState(instance("a"), Duration.ofSeconds(10), ticker);

  @Test
  void startedAndFinishedCountTheAttemptsInFlight() {
    state.started();
    state.started();
    state.finished(Duration.ofMillis(5));

    assertThat(state.inFlight()).isEqualTo(1);
  }

  @Test
  void theFirstSampleSetsTheLatencyOutright() {
    assertThat(state.hasLatencySample()).isFalse();
    assertThat(state.ewmaNanos()).isZero();

    state.started();
    state.finished(Duration.ofMillis(100));

    assertThat(state.hasLatencySample()).isTrue();
    assertThat(state.ewmaLatency()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void aSampleWeighsOneAgainstExpOfMinusAgeOverTheDecayForEachEarlierOne() {
    state.started();
    state.finished(Duration.ofMillis(100));

    ticker.advance(Duration.ofSeconds(10)); // one time constant: the old sample keeps 1/e of its weight
    state.started();
    state.finished(Duration.ofMillis(200));

    double old = Math.exp(-1);
    assertThat(state.ewmaNanos()).isCloseTo((100e6 * old + 200e6) / (old + 1), within(1.0));
  }

  @Test
  void samplesCloseTogetherAreAveragedNotFrozenAtTheFirst() {
    // Issue 34, item 6: the old form (ewma * w + sample * (1 - w)) kept 100 ms here, each later sample weighing
    // 1 - exp(-1 ms / 10 s), about 1e-4
    for (int ms : new int[] {100, 200, 300}) {
      ticker.advance(Duration.ofMillis(1));
      state.started();
      state.finished(Duration.ofMillis(ms));
    }

    assertThat(state.ewmaNanos()).isCloseTo(200e6, within(0.01e6));
  }

  @Test
  void aSampleAfterManySteadyOnesWeighsOneOfMaxEvidenceSamples() {
    for (int i = 0; i < 3000; i++) { // 30 s of samples 10 ms apart: the weights have settled
      ticker.advance(Duration.ofMillis(10));
      state.started();
      state.finished(Duration.ofMillis(100));
    }

    ticker.advance(Duration.ofMillis(10));
    state.started();
    state.finished(Duration.ofSeconds(10));

    // the evidence is capped at MAX_EVIDENCE samples' worth: the new sample weighs 1/20, not 1/1000 (the old form's
    // 1 - exp(-10 ms / 10 s)): 100 + (10,000 - 100) / 20 ms
    assertThat(EndpointState.MAX_EVIDENCE).isEqualTo(20.0);
    assertThat(state.ewmaLatency()).isBetween(Duration.ofMillis(594), Duration.ofMillis(596));
  }

  @Test
  void theScoreGrowsWithLoadAndLatency() {
    state.started();
    state.finished(Duration.ofMillis(10));
    double idle = state.score();

    state.started();

    assertThat(state.score()).isEqualTo(2 * idle);
  }

  @Test
  void whileNoSampleArrivesTheEvidenceFadesNotTheLatency() {
    state.started();
    state.finished(Duration.ofSeconds(1));
    double score = state.score();
    double variance = state.latencyVariance(ticker.getAsLong());

    ticker.advance(Duration.ofSeconds(30)); // three decay periods without a sample

    assertThat(state.evidence(ticker.getAsLong())).isCloseTo(Math.exp(-3), within(1e-9));
    assertThat(state.latencyVariance(ticker.getAsLong())).as("an estimate nobody refreshes tells less and less")
        .isGreaterThan(10 * variance);
    assertThat(state.score()).as("an idle endpoint does not look faster (it used to fade toward 0)")
        .isEqualTo(score);
    assertThat(state.ewmaLatency()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void theEstimateIsUncertainWithoutSamplesAndTightensWithSteadyOnes() {
    assertThat(state.latencyVariance(ticker.getAsLong())).isInfinite();

    state.started();
    state.finished(Duration.ofMillis(10));
    double one = state.latencyVariance(ticker.getAsLong());
    for (int i = 0; i < 99; i++) {
      ticker.advance(Duration.ofMillis(1));
      state.started();
      state.finished(Duration.ofMillis(10));
    }

    assertThat(one).as("one sample: the assumed spread over one sample's worth of evidence")
        .isCloseTo(EndpointState.PRIOR_WEIGHT * 0.25 / (1 + EndpointState.PRIOR_WEIGHT), within(1e-12));
    double many = state.latencyVariance(ticker.getAsLong());
    assertThat(many).isLessThan(one / 100);
    for (int i = 0; i < 900; i++) {
      ticker.advance(Duration.ofMillis(1));
      state.started();
      state.finished(Duration.ofMillis(10));
    }
    assertThat(state.latencyVariance(ticker.getAsLong())).as("no more certain than MAX_EVIDENCE samples make it")
        .isCloseTo(many, within(many * 0.01));
  }
}
