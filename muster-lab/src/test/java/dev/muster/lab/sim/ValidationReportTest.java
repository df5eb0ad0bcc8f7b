package dev.muster.lab.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import dev.muster.lab.sim.ValidationConfig.PlannedPause;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The plan a real run follows, and how its outcomes are judged against the model, on made-up outcomes. */
class ValidationReportTest {
  private static final Duration TTL = Duration.ofSeconds(3);
  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  @Test
  void thePlanIsTheModelsRuleOnSeededPhasesAndPausesCappedAtTwiceTheTtl() {
    ValidationConfig config = ValidationConfig.builder().providers(20).rounds(2).build();
    assertThat(config.pauseMedian()).isEqualTo(Duration.ofMillis(2400));
    assertThat(config.keepalive()).isEqualTo(Duration.ofSeconds(1));
    List<PlannedPause> plan = config.plan();
    assertThat(plan).hasSize(40).isEqualTo(config.plan());
    assertThat(plan.get(0).provider()).isEqualTo("p1");
    assertThat(plan.get(39).provider()).isEqualTo("p20");
    assertThat(plan).allSatisfy(p -> {
      assertThat(p.phase()).isBetween(Duration.ZERO, Duration.ofSeconds(1));
      assertThat(p.pause()).isLessThanOrEqualTo(Duration.ofSeconds(6));
      assertThat(p.predictedRemoval()).isEqualTo(p.pause().compareTo(TTL.minus(p.phase())) > 0);
    });
    // Both outcomes, and both clear of the tolerance, so a run can show the model right and wrong.
    assertThat(plan).anyMatch(p -> p.predictedRemoval() && p.pause().compareTo(TTL.plusMillis(600)) > 0)
        .anyMatch(p -> !p.predictedRemoval() && p.pause().compareTo(Duration.ofMillis(1400)) < 0);
    assertThat(config.removalProbability()).isBetween(0.4, 0.6);
    assertThat(ValidationConfig.builder().seed(8).build().plan()).isNotEqualTo(plan);
  }

  @Test
  void onlyADisagreementFartherThanTheToleranceFromTheBoundaryContradictsTheModel() {
    ValidationConfig config = ValidationConfig.builder().providers(3).rounds(1).build();
    PauseTrial agreed = trial("p1", 400, 3000, true); // boundary 2.6 s, removed as predicted
    PauseTrial nearMiss = trial("p2", 400, 2900, false); // +0.3 s past the boundary, yet kept: timing
    PauseTrial wrong = trial("p3", 400, 1000, true); // 1.6 s short of the boundary, yet removed: the model is wrong
    ValidationReport report = new ValidationReport(config, List.of(wrong, nearMiss, agreed), Duration.ofSeconds(5),
        Duration.ofSeconds(10));

    assertThat(report.trials()).extracting(t -> t.planned().provider()).containsExactly("p1", "p2", "p3");
    assertThat(report.observedRemovals()).isEqualTo(2);
    assertThat(report.predictedRemovals()).isEqualTo(2);
    assertThat(report.disagreements()).containsExactly(nearMiss, wrong);
    assertThat(report.contradictions()).containsExactly(wrong);
    assertThat(report.text()).contains("observed 2 of 3 pauses; predicted 2")
        .contains("disagreements within ±600ms of the boundary (not held to the model): 1")
        .contains("contradictions (a disagreement farther from the boundary): 1")
        .contains("p3 round 1: phase 0.400s, pause 1.000s, margin -1.600s: predicted kept, observed removed");
    assertThat(report.csv().lines().toList()).hasSize(4).first().isEqualTo(ValidationReport.CSV_HEADER);
    assertThat(report.csv()).contains("p2,1,0.4000,2.9000,2.6000,0.3000,true,false,");
  }

  @Test
  void badValidationInputIsRefusedWithTheFlag() {
    assertThatThrownBy(() -> ValidationConfig.builder().ttl(Duration.ofMillis(2500)).build())
        .isInstanceOf(InvalidInputException.class).hasMessageContaining("--validate-ttl");
    assertThatThrownBy(() -> ValidationConfig.builder().providers(0).build())
        .hasMessageContaining("--validate-providers 0 is invalid");
    assertThatThrownBy(() -> ValidationConfig.builder().sigma(0).build())
        .hasMessageContaining("--validate-sigma 0.0 is invalid");
  }

  private static PauseTrial trial(String provider, long phaseMs, long pauseMs, boolean removed) {
    Duration phase = Duration.ofMillis(phaseMs);
    Duration pause = Duration.ofMillis(pauseMs);
    PlannedPause planned = new PlannedPause(provider, 1, phase, pause, MusterModel.removes(pause, phase, TTL));
    Instant stopped = T0.plusSeconds(Integer.parseInt(provider.substring(1)) * 10L);
    return new PauseTrial(planned, TTL.minus(phase), stopped, stopped.plus(pause), TTL.minus(phase), removed);
  }
}
