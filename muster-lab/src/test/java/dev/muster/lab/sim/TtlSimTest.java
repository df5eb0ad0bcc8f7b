package dev.muster.lab.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Seed 003's table, reproduced by its own model with its own parameters, and what Muster's model adds. The
 * false-removal figures are held to the exact values from the normal distribution, so "within Monte Carlo error"
 * means something: both the seed's printed figures and ours are within 3 standard errors of the truth.
 */
class TtlSimTest {
  private static final List<Integer> TTLS = List.of(15, 30, 60);
  /** Seed 003's printed false removals per day: sigma 1.0 at TTL 15, 30, 60 s, then sigma 1.5. */
  private static final double[][] SEED_PER_DAY = {{0.67, 0.05, 0.00}, {23.46, 6.36, 1.47}};
  private static final double[] SIGMAS = {1.0, 1.5};
  /** The seed prints two decimals. */
  private static final double PRINTED = 0.005;

  private static TtlReport report;

  @BeforeAll
  static void runWithTheSeedsParameters() {
    report = TtlSim.run(TtlSimConfig.defaults());
  }

  @Test
  void theSeedModelsDetectionDelaysAreTheSeedsTable() {
    for (int ttl : TTLS) {
      DelayStats d = seedRow(ttl, 1.0).delay();
      assertThat(seconds(d.p50())).as("P50 at TTL %d s", ttl).isCloseTo(ttl - 2.5, within(0.1));
      assertThat(seconds(d.p99())).as("P99 at TTL %d s", ttl).isCloseTo(ttl, within(0.1));
      assertThat(seconds(d.p99())).as("P99 at TTL %d s, exactly TTL - heartbeat/100", ttl)
          .isCloseTo(ttl - 0.05, within(0.01));
      assertThat(seconds(d.max())).isLessThanOrEqualTo(ttl);
      assertThat(d.exact().orElseThrow()).isEqualTo(new DelayStats.Exact(Duration.ofMillis(ttl * 1000L - 2500),
          Duration.ofMillis(ttl * 1000L - 50), Duration.ofSeconds(ttl)));
    }
  }

  @Test
  void theSeedModelsFalseRemovalsAreTheSeedsTableWithinMonteCarloError() {
    for (int s = 0; s < SIGMAS.length; s++) {
      for (int t = 0; t < TTLS.size(); t++) {
        RemovalEstimate e = seedRow(TTLS.get(t), SIGMAS[s]).removals();
        double exact = 2000 * Normal.upperTail(Math.log(TTLS.get(t) / 0.5) / SIGMAS[s]);
        double se = standardError(exact);
        String row = "sigma " + SIGMAS[s] + " TTL " + TTLS.get(t) + " s";
        assertThat(e.exactPerDay().getAsDouble()).as(row).isCloseTo(exact, within(1e-12));
        assertThat(SEED_PER_DAY[s][t]).as("the seed's figure, %s", row).isCloseTo(exact, within(3 * se + PRINTED));
        assertThat(e.perDay()).as("ours, %s", row).isCloseTo(exact, within(3 * se));
        // Two estimates of the same rate: their difference has √2 times one's standard error.
        assertThat(e.perDay()).as("ours against the seed's, %s", row)
            .isCloseTo(SEED_PER_DAY[s][t], within(3 * Math.sqrt(2) * se + PRINTED));
        assertThat(e.perYear()).isEqualTo(e.perDay() * 365);
      }
    }
  }

  @Test
  void theStandardErrorIsTheBinomialOne() {
    RemovalEstimate e = seedRow(15, 1.5).removals();
    double p = e.probability();
    assertThat(e.standardErrorPerDay()).isCloseTo(2000 * Math.sqrt(p * (1 - p) / 2_000_000), within(1e-12));
    assertThat(e.samples()).isEqualTo(2_000_000);
  }

  @Test
  void musterRemovesAtLeastAsOftenAsTheSeedOnEveryRowBecauseThePhaseMatters() {
    for (double sigma : SIGMAS) {
      for (int ttl : TTLS) {
        RemovalEstimate seed = seedRow(ttl, sigma).removals();
        RemovalEstimate muster = musterRow(ttl, sigma).removals();
        String row = "sigma " + sigma + " TTL " + ttl + " s";
        assertThat(muster.hits()).as("same pauses, sample by sample: %s", row).isGreaterThanOrEqualTo(seed.hits());
        assertThat(muster.exactProbability().getAsDouble()).as(row)
            .isGreaterThan(seed.exactProbability().getAsDouble());
        assertThat(muster.perDay()).as("Monte Carlo against Simpson, %s", row)
            .isCloseTo(muster.exactPerDay().getAsDouble(), within(3 * standardError(muster.exactPerDay().getAsDouble())));
      }
    }
    // At TTL 15 s both renew every 5 s, and the phase alone doubles the seed's figure (sigma 1.0: 0.67 → 1.42).
    assertThat(musterRow(15, 1.0).removals().exactPerDay().getAsDouble()).isCloseTo(1.4208, within(0.001));
  }

  @Test
  void musterDetectsACrashAfterTtlMinusKeepaliveAndWithinTtlPlusTheExpiryScan() {
    for (int ttl : TTLS) {
      TtlRow r = musterRow(ttl, 1.0);
      double k = ttl / 3.0;
      assertThat(seconds(r.interval())).isCloseTo(k, within(1e-9));
      assertThat(seconds(r.delay().max())).as("TTL %d s", ttl).isLessThan(ttl + 0.5);
      assertThat(seconds(r.delay().p50())).as("TTL - K/2 + 250 ms, TTL %d s", ttl)
          .isCloseTo(ttl - k / 2 + 0.25, within(0.1));
      DelayStats.Exact exact = r.delay().exact().orElseThrow();
      assertThat(exact.max()).isEqualTo(Duration.ofMillis(ttl * 1000L + 500));
      // The top 1 % is a triangle of the two uniforms (K wide, 500 ms wide): x²/(2·K·0.5) = 0.01.
      assertThat(seconds(exact.p99())).isCloseTo(ttl + 0.5 - Math.sqrt(0.01 * k), within(1e-6));
      assertThat(seconds(r.delay().p99())).isCloseTo(seconds(exact.p99()), within(0.02));
    }
  }

  @Test
  void theSameSeedGivesTheSameReportAndAnotherSeedAnother() {
    TtlSimConfig small = TtlSimConfig.defaults().toBuilder().samples(200_000).delaySamples(1000).build();
    assertThat(TtlSim.run(small)).isEqualTo(TtlSim.run(small));
    assertThat(TtlSim.run(small.toBuilder().seed(8).build()).rows())
        .isNotEqualTo(TtlSim.run(small).rows());
  }

  @Test
  void leaderChangesOnlyEverRemoveFewerAndDetectLater() {
    // One leader change every 10 s: absurd for a cluster, visible in the figures.
    TtlSimConfig calm = TtlSimConfig.defaults().toBuilder().samples(200_000).delaySamples(10_000).build();
    TtlReport without = TtlSim.run(calm);
    TtlReport with = TtlSim.run(calm.toBuilder().leaderChangesPerDay(8640).build());
    for (int ttl : TTLS) {
      TtlRow a = without.row(TtlReport.MUSTER_MODEL, Duration.ofSeconds(ttl), 1.5).orElseThrow();
      TtlRow b = with.row(TtlReport.MUSTER_MODEL, Duration.ofSeconds(ttl), 1.5).orElseThrow();
      assertThat(b.removals().hits()).as("TTL %d s", ttl).isLessThan(a.removals().hits());
      assertThat(b.removals().exactProbability()).isEmpty();
      assertThat(b.delay().p99()).isGreaterThan(a.delay().p99());
      assertThat(with.row(TtlReport.SEED_MODEL, Duration.ofSeconds(ttl), 1.5))
          .isEqualTo(without.row(TtlReport.SEED_MODEL, Duration.ofSeconds(ttl), 1.5));
    }
  }

  @Test
  void anExplicitKeepaliveIsUsedForEveryTtl() {
    TtlReport r = TtlSim.run(TtlSimConfig.defaults().toBuilder().keepalive(Duration.ofSeconds(5)).samples(100_000)
        .delaySamples(1000).build());
    assertThat(r.rows(TtlReport.MUSTER_MODEL)).allSatisfy(row -> assertThat(row.interval())
        .isEqualTo(Duration.ofSeconds(5)));
  }

  @Test
  void aPauseRemovesOnlyWhenItOutlastsWhatIsLeftOfTheLease() {
    Duration ttl = Duration.ofSeconds(3);
    assertThat(MusterModel.removes(Duration.ofMillis(2500), Duration.ofMillis(400), ttl)).isFalse();
    assertThat(MusterModel.removes(Duration.ofMillis(2700), Duration.ofMillis(400), ttl)).isTrue();
    assertThat(MusterModel.removes(Duration.ofMillis(2600), Duration.ofMillis(400), ttl)).as("exactly at expiry")
        .isFalse();
  }

  private static double standardError(double perDay) {
    double p = perDay / 2000;
    return 2000 * Math.sqrt(p * (1 - p) / 2_000_000);
  }

  private static TtlRow seedRow(int ttl, double sigma) {
    return report.row(TtlReport.SEED_MODEL, Duration.ofSeconds(ttl), sigma).orElseThrow();
  }

  private static TtlRow musterRow(int ttl, double sigma) {
    return report.row(TtlReport.MUSTER_MODEL, Duration.ofSeconds(ttl), sigma).orElseThrow();
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }
}
