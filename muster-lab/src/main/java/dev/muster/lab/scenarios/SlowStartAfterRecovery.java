package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.CallShare;
import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.PerSecondChart;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Slow start (Envoy's {@code slow_start_config}): an endpoint that comes back after its probes failed is given a
 * rising share of the new picks over the window instead of its full share at once, so a cold (or just-recovered)
 * instance is not flooded. Consumer S ramps it; consumer N (the control, no slow start) gives it a full third from
 * the first second.
 *
 * <p>How: 3 providers, p1 with a fault file. S ({@code --probe http:/health}, every 300 ms, 300 ms timeout,
 * {@code --slow-start 10s}, weighted random) and N (the same without {@code --slow-start}), both without ejection
 * or retry (only the probe and the ramp decide who is picked), call every 10 ms (100 calls per second, so a share
 * per second is a share of about 100 calls). Once both are warm, their probes settled (all three routable, no probe
 * or panic event for 2 s) and S ramps nothing (a cold consumer's first probes can time out on a healthy provider,
 * whose return would ramp), p1's fault file says {@code 503} until both consumers printed
 * {@code probe_down} for it; then it is deleted. From each consumer's {@code probe_up} of p1: p1's share of the
 * calls that started in each of the next 12 s (charted in report.html), and S's {@code slow_start_done}. Envoy's
 * formula with aggression 1 and min weight 10 % gives p1 a factor max(10 %, max(t, 1 s) / 10 s) of its weight, so
 * about 5 % of S's calls in the first second, rising to a third after 10 s.
 */
public final class SlowStartAfterRecovery implements Scenario {
  private static final Duration INTERVAL = Duration.ofMillis(10);
  private static final Duration PROBE_INTERVAL = Duration.ofMillis(300);
  private static final Duration PROBE_TIMEOUT = Duration.ofMillis(300);
  private static final Duration SLOW_START = Duration.ofSeconds(10);
  private static final int SECONDS = 12;
  /** S's share of p1 in the first second must be at most this, N's at least {@link #N_FIRST_MIN}. */
  private static final double S_FIRST_MAX = 15.0;
  private static final double N_FIRST_MIN = 20.0;
  /** S's mean share over the seconds past the window must be at least this. */
  private static final double S_LAST_MIN = 20.0;
  /** Before the fault, S and N have all three routable and no probe or panic event for this long. */
  private static final Duration SETTLED = Duration.ofSeconds(2);

  @Override
  public String name() {
    return "slow_start_after_recovery";
  }

  @Override
  public String shows() {
    return "p1 back after failed probes: S (--slow-start 10s) ramps its share from ~5 % to a third; N (control)"
        + " gives it a third at once";
  }

  @Override
  public String seed() {
    return "issue 16: Envoy's slow start (aggression 1, min weight 10 %) for an endpoint that recovered";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    FaultFile p1Fault = FaultFile.of(ctx, "p1");
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3, i -> i == 1 ? p1Fault.args() : new String[0]);
    List<String> probe = List.of("--probe", "http:/health", "--probe-interval", PROBE_INTERVAL.toMillis() + "ms",
        "--probe-timeout", PROBE_TIMEOUT.toMillis() + "ms");
    List<String> slow = new ArrayList<>(probe);
    slow.addAll(List.of("--slow-start", SLOW_START.toSeconds() + "s"));
    Duration timeout = ctx.params().attemptTimeout();
    ChildProcess s = Callers.startWithPolicy(ctx, "consumer-s", f.service, endpoints, "WEIGHTED_RANDOM", false,
        INTERVAL, timeout, slow.toArray(String[]::new));
    ChildProcess n = Callers.startWithPolicy(ctx, "consumer-n", f.service, endpoints, "WEIGHTED_RANDOM", false,
        INTERVAL, timeout, probe.toArray(String[]::new));
    f.awaitWarm(ctx, s, n);
    HealthLines.awaitSettled(ctx, SETTLED, s, n);
    ctx.await("S ramps no endpoint (a slow_start_done after each of its probe_up lines)", SLOW_START.plusSeconds(10),
        HealthLines.POLL, () -> rampsNothing(s));

    Instant fault = p1Fault.set("503");
    ctx.await("S and N probe p1 down", Duration.ofSeconds(10), HealthLines.POLL,
        () -> HealthLines.first(s, "probe_down", "p1", fault).isPresent()
            && HealthLines.first(n, "probe_down", "p1", fault).isPresent());
    Instant heal = p1Fault.clear();
    ctx.await("S and N let p1 back in (probe_up)", Duration.ofSeconds(10), HealthLines.POLL,
        () -> HealthLines.first(s, "probe_up", "p1", heal).isPresent()
            && HealthLines.first(n, "probe_up", "p1", heal).isPresent());
    Instant sUp = HealthLines.first(s, "probe_up", "p1", heal).orElseThrow();
    Instant nUp = HealthLines.first(n, "probe_up", "p1", heal).orElseThrow();
    Instant end = (sUp.isAfter(nUp) ? sUp : nUp).plusSeconds(SECONDS);
    ctx.sleep(Duration.between(Instant.now(), end.plusMillis(500)));

    List<JsonNode> sCalls = Fleet.calls(s, sUp, sUp.plusSeconds(SECONDS));
    List<JsonNode> nCalls = Fleet.calls(n, nUp, nUp.plusSeconds(SECONDS));
    List<Double> sShare = CallShare.perSecond(sCalls, "p1", sUp, SECONDS);
    List<Double> nShare = CallShare.perSecond(nCalls, "p1", nUp, SECONDS);
    Optional<Instant> sDone = HealthLines.first(s, "slow_start_done", "p1", sUp);
    boolean nRamped = HealthLines.first(n, "slow_start_done", "p1", heal).isPresent();
    int past = (int) SLOW_START.toSeconds();
    double sFirst = CallShare.mean(sShare, 0, 1);
    double nFirst = CallShare.mean(nShare, 0, 1);
    double sLast = CallShare.mean(sShare, past, SECONDS);
    double nMean = CallShare.mean(nShare, 0, SECONDS);
    long sOthers = HealthLines.probeDownsOfOthers(s, "p1", sUp, sUp.plusSeconds(SECONDS));
    long nOthers = HealthLines.probeDownsOfOthers(n, "p1", nUp, nUp.plusSeconds(SECONDS));
    ctx.note("S p1 share per second " + sShare);
    ctx.note("N p1 share per second " + nShare);

    // Failures are reported, not judged: the shares are the figure (a B-style call can time out on a loaded machine).
    boolean pass = sFirst <= S_FIRST_MAX && nFirst >= N_FIRST_MIN && sLast >= S_LAST_MIN && sDone.isPresent()
        && !nRamped;
    String summary = String.format("p1's share of the calls per second after each consumer's probe_up of it: S"
            + " (--slow-start 10s) %s %%, first second %.1f %%, seconds %d-%d %.1f %%, slow_start_done %s after"
            + " probe_up; N (no slow start, the control) %s %%, first second %.1f %%, mean %.1f %%; failures in those"
            + " %d s: S %d of %d, N %d of %d; healthy p2/p3 probed down in them: S %d, N %d times",
        list(sShare), sFirst, past, SECONDS, sLast, HealthLines.ms(sUp, sDone), list(nShare), nFirst, nMean, SECONDS,
        Fleet.failed(sCalls), sCalls.size(), Fleet.failed(nCalls), nCalls.size(), sOthers, nOthers)
        + HealthLines.stall(HealthLines.STALL, sUp.isBefore(nUp) ? sUp : nUp, end, s, n);
    PerSecondChart chart = new PerSecondChart("p1's share of the consumer's calls, %",
        "the consumer's probe_up of p1", List.of(new PerSecondChart.Line("S (--slow-start 10s)", sShare),
            new PerSecondChart.Line("N (no slow start, the control)", nShare)));
    return ScenarioResult.of(this, pass, Figures.withPerSecond(summary, chart),
        "S's share of p1 in the first second after probe_up <= " + (int) S_FIRST_MAX + " %, N's >= "
            + (int) N_FIRST_MIN + " %; S's share after the 10 s window >= " + (int) S_LAST_MIN + " % and S printed"
            + " slow_start_done (N none)");
  }

  /** Every endpoint S let back in (probe_up) has finished its ramp (slow_start_done after it). */
  private static boolean rampsNothing(ChildProcess s) {
    for (JsonNode up : s.json().events("probe_up")) {
      String id = up.path("instance").asText();
      if (HealthLines.first(s, "slow_start_done", id, JsonLog.ts(up)).isEmpty()) {
        return false;
      }
    }
    return true;
  }

  private static String list(List<Double> shares) {
    return shares.stream().map(v -> v == null ? "-" : String.format("%.0f", v)).collect(Collectors.joining(", ",
        "[", "]"));
  }
}
