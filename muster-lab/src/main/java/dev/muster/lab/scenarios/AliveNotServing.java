package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A provider that is alive and holds its lease but does not serve stays in every set: the lease cannot see it. A
 * consumer on the lease alone (B) fails its share of the calls for as long as the fault lasts; one that probes
 * {@code /health} (P) takes the provider out after {@code unhealthyThreshold} failed probes and lets it back after
 * {@code healthyThreshold} passed ones.
 *
 * <p>How: 3 providers, p1 with a fault file. B ({@code --no-eject --max-retries 0}, no probe) and P (the same plus
 * {@code --probe http:/health}, every 500 ms, 300 ms timeout, thresholds 2 and 2: no ejection and no retry, so the
 * probe's effect is isolated) call every call interval; the faults start once both are warm and P's probes have
 * settled (all three routable, no probe event for 2 s). Phase 1: p1's fault file says {@code 503} (every answer
 * 503) for 6 s, then is deleted; phase 2: {@code hang} (requests accepted, never answered) for 6 s. Per phase, from
 * the logs: B's failed share while p1 was faulty and its last failure; P's {@code probe_down} of p1 and its last
 * call to p1 after the fault, P's failures before and after that {@code probe_down} until the heal; after the
 * heal, P's {@code probe_up} of p1 and its first call to p1 again.
 */
public final class AliveNotServing implements Scenario {
  private static final Duration PHASE = Duration.ofSeconds(6);
  private static final Duration PROBE_INTERVAL = Duration.ofMillis(500);
  private static final Duration PROBE_TIMEOUT = Duration.ofMillis(300);
  private static final int UNHEALTHY = 2;
  private static final int HEALTHY = 2;
  /** interval × N + timeout = 1.3 s, plus slack for jitter and a loaded 2-core machine. */
  private static final Duration DOWN_LIMIT = Duration.ofSeconds(3);
  /** interval × M = 1 s, plus slack. */
  private static final Duration UP_LIMIT = Duration.ofSeconds(3);
  /** B's failed share while p1 is faulty must be above this (round robin over 3: about a third). */
  private static final double B_MIN_FAILED = 0.20;
  /** Before the first fault, P has all three routable and no probe event for this long. */
  private static final Duration SETTLED = Duration.ofSeconds(2);

  @Override
  public String name() {
    return "alive_not_serving";
  }

  @Override
  public String shows() {
    return "p1 alive with its lease but answering 503, then hanging: B (lease only) fails its share all along;"
        + " P (--probe http:/health) takes p1 out and back";
  }

  @Override
  public String seed() {
    return "issue 16: the lease cannot see a provider that is alive but not serving; an active probe can";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    FaultFile p1Fault = FaultFile.of(ctx, "p1");
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3, i -> i == 1 ? p1Fault.args() : new String[0]);
    ChildProcess b = ctx.consumer("consumer-b", f.service, endpoints, false);
    ChildProcess p = ctx.consumer("consumer-p", f.service, endpoints, false, "--probe", "http:/health",
        "--probe-interval", PROBE_INTERVAL.toMillis() + "ms", "--probe-timeout", PROBE_TIMEOUT.toMillis() + "ms",
        "--unhealthy-threshold", Integer.toString(UNHEALTHY), "--healthy-threshold", Integer.toString(HEALTHY));
    f.awaitWarm(ctx, b, p);
    HealthLines.awaitSettled(ctx, SETTLED, p);

    Instant from = Instant.now();
    Phase serving503 = phase(ctx, p1Fault, b, p, "503");
    Phase hanging = phase(ctx, p1Fault, b, p, "hang");
    String stall = HealthLines.stall(HealthLines.STALL, from, Instant.now(), b, p);
    ctx.note(serving503.toString());
    ctx.note(hanging.toString());

    boolean pass = serving503.passed() && hanging.passed();
    return ScenarioResult.of(this, pass, serving503 + "; " + hanging + stall,
        "per phase: B fails > " + Math.round(B_MIN_FAILED * 100) + " % of its calls while p1 is faulty; P's"
            + " probe_down of p1 within " + DOWN_LIMIT.toSeconds() + " s of the fault (interval × " + UNHEALTHY
            + " + timeout + slack) and 0 P failures from then to the heal; P's probe_up within "
            + UP_LIMIT.toSeconds() + " s of the heal and p1 called again");
  }

  /** One fault: write {@code word}, wait {@link #PHASE}, heal, wait until P lets p1 back and calls it. */
  private static Phase phase(LabContext ctx, FaultFile p1Fault, ChildProcess b, ChildProcess p, String word) {
    Instant fault = p1Fault.set(word);
    ctx.sleep(PHASE);
    Instant heal = p1Fault.clear();
    ctx.await("P lets p1 back in (probe_up) and calls it again", Duration.ofSeconds(15), HealthLines.POLL,
        () -> HealthLines.first(p, "probe_up", "p1", heal).isPresent()
            && HealthLines.firstCallTo(p, "p1", heal).isPresent());
    ctx.sleep(Duration.ofSeconds(1)); // calls in flight at the heal finish; B and P settle before the next phase

    List<JsonNode> bCalls = Fleet.calls(b, fault, heal);
    Optional<Instant> down = HealthLines.first(p, "probe_down", "p1", fault).filter(t -> t.isBefore(heal));
    List<JsonNode> pCalls = Fleet.calls(p, fault, heal);
    List<JsonNode> pBefore = Fleet.calls(p, fault, down.orElse(heal));
    List<JsonNode> pAfter = down.map(d -> Fleet.calls(p, d, heal)).orElse(List.of());
    return new Phase(word, Fleet.millis(fault, heal), bCalls.size(), Fleet.failed(bCalls),
        HealthLines.lastFailed(bCalls).map(t -> Fleet.millis(fault, t)), down.map(t -> Fleet.millis(fault, t)),
        HealthLines.lastCallTo(pCalls, "p1").map(t -> Fleet.millis(fault, t)), Fleet.failed(pBefore),
        pAfter.size(), Fleet.failed(pAfter),
        HealthLines.first(p, "probe_up", "p1", heal).map(t -> Fleet.millis(heal, t)),
        HealthLines.firstCallTo(p, "p1", heal).map(t -> Fleet.millis(heal, t)),
        HealthLines.probeDownsOfOthers(p, "p1", fault, heal));
  }

  /** What one phase measured; times in ms from the fault (fault…) or from the heal (heal…). */
  private record Phase(String word, long faultMs, int bCalls, long bFailed, Optional<Long> bLastFailure,
      Optional<Long> pDown, Optional<Long> pLastToP1, long pFailedBeforeDown, int pCallsAfterDown,
      long pFailedAfterDown, Optional<Long> pUp, Optional<Long> pBackToP1, long pOthersDown) {

    boolean passed() {
      return bCalls > 0 && bFailed > B_MIN_FAILED * bCalls
          && pDown.isPresent() && pDown.get() <= DOWN_LIMIT.toMillis()
          && pCallsAfterDown > 0 && pFailedAfterDown == 0
          && pUp.isPresent() && pUp.get() <= UP_LIMIT.toMillis() && pBackToP1.isPresent();
    }

    @Override
    public String toString() {
      return String.format("%s for %.1f s: B %d of %d calls failed (%s), the last %s after the fault; P probe_down"
              + " of p1 after %s, its last call to p1 %s after the fault, %d failures before the probe_down, %d of %d"
              + " after it; healed: P probe_up after %s, p1 called again after %s%s",
          word, faultMs / 1000.0, bFailed, bCalls, HealthLines.percent(bFailed, bCalls), ms(bLastFailure),
          ms(pDown), ms(pLastToP1), pFailedBeforeDown, pFailedAfterDown, pCallsAfterDown, ms(pUp), ms(pBackToP1),
          pOthersDown == 0 ? "" : " (P also probed a healthy provider down " + pOthersDown + " times in the phase)");
    }

    private static String ms(Optional<Long> v) {
      return v.map(x -> x + " ms").orElse("never");
    }
  }
}
