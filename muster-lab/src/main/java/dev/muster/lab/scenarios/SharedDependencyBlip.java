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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * All-down protection: when a dependency every provider's health check looks at blinks, every probe fails at once
 * although the providers still serve. A consumer that trusts its probes absolutely (C, {@code --no-panic}, the
 * control) has no endpoint left and fails its calls; one with Envoy's panic threshold (P, 50 %) routes across all UP
 * endpoints once fewer than half are routable, and fails nothing.
 *
 * <p>How: 3 providers, each with a fault file. P ({@code --probe http:/health}, every 300 ms, 300 ms timeout,
 * thresholds 2 and 2, panic threshold 50 %) and C (the same plus {@code --no-panic}), both without ejection or retry
 * (so only the routing decides), call every call interval; once both are warm and their probes settled (all
 * three routable, no probe or panic event for 2 s), all three fault files say {@code health-503} for 3 s:
 * {@code /health} answers 503, {@code /hello} works. Then the files are deleted, and each consumer recovers when it
 * printed {@code probe_up} for all three. From the logs: P's failures from the blip to its recovery and its
 * {@code panic_on}/{@code panic_off}; C's failures over the same span and while it had all three probed down; each
 * consumer's failures in the 2 s after its recovery. Every provider serves {@code /hello} throughout, so the
 * invariant judges the failures the routing decides (no endpoint, an error status, a refused connection); a call that
 * timed out met the machine's load and is named with its error in the figures, not judged.
 */
public final class SharedDependencyBlip implements Scenario {
  private static final Duration BLIP = Duration.ofSeconds(3);
  private static final Duration PROBE_INTERVAL = Duration.ofMillis(300);
  private static final Duration PROBE_TIMEOUT = Duration.ofMillis(300);
  private static final Duration AFTER = Duration.ofSeconds(2);
  /** Before the blip, P and C have all three routable and no probe or panic event for this long. */
  private static final Duration SETTLED = Duration.ofSeconds(2);
  private static final List<String> IDS = List.of("p1", "p2", "p3");

  @Override
  public String name() {
    return "shared_dependency_blip";
  }

  @Override
  public String shows() {
    return "every /health answers 503 for 3 s (/hello works): P (panic threshold 50 %) routes across all and fails"
        + " nothing; C (--no-panic, control) has no endpoint left";
  }

  @Override
  public String seed() {
    return "issue 16: Envoy's healthy_panic_threshold (all-down protection) against a shared-dependency blip";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    List<FaultFile> faults = IDS.stream().map(id -> FaultFile.of(ctx, id)).toList();
    Fleet f = Fleet.providers(ctx, "hello", endpoints, IDS.size(), i -> faults.get(i - 1).args());
    String[] probe = {"--probe", "http:/health", "--probe-interval", PROBE_INTERVAL.toMillis() + "ms",
        "--probe-timeout", PROBE_TIMEOUT.toMillis() + "ms", "--unhealthy-threshold", "2", "--healthy-threshold", "2"};
    ChildProcess p = ctx.consumer("consumer-p", f.service, endpoints, false, probe);
    List<String> noPanic = new ArrayList<>(List.of(probe));
    noPanic.add("--no-panic");
    ChildProcess c = ctx.consumer("consumer-c", f.service, endpoints, false, noPanic.toArray(String[]::new));
    f.awaitWarm(ctx, p, c);
    HealthLines.awaitSettled(ctx, SETTLED, p, c);

    Instant blip = null;
    for (FaultFile fault : faults) {
      Instant at = fault.set("health-503");
      blip = blip == null ? at : blip;
    }
    ctx.sleep(BLIP);
    Instant heal = null;
    for (FaultFile fault : faults) {
      heal = fault.clear();
    }
    Instant healed = heal;
    ctx.await("P and C let all three back in (probe_up)", Duration.ofSeconds(15), HealthLines.POLL,
        () -> recovered(p, healed).isPresent() && recovered(c, healed).isPresent());
    Instant pBack = recovered(p, healed).orElseThrow();
    Instant cBack = recovered(c, healed).orElseThrow();
    Instant last = pBack.isAfter(cBack) ? pBack : cBack;
    ctx.sleep(Duration.between(Instant.now(), last.plus(AFTER).plusMillis(500)).isNegative() ? Duration.ZERO
        : Duration.between(Instant.now(), last.plus(AFTER).plusMillis(500)));

    List<JsonNode> pBlip = Fleet.calls(p, blip, pBack);
    List<JsonNode> cBlip = Fleet.calls(c, blip, cBack);
    long pFailed = Fleet.failed(pBlip);
    long cFailed = Fleet.failed(cBlip);
    Optional<Instant> panicOn = Callers.firstAt(p, "panic_on", blip).filter(t -> t.isBefore(healed));
    Optional<Instant> panicOff = panicOn.flatMap(on -> Callers.firstAt(p, "panic_off", on));
    Optional<Instant> cAllDown = allDown(c, blip);
    Optional<Instant> cFirstUp = Callers.firstAt(c, "probe_up", healed);
    List<JsonNode> cDown = cAllDown.isPresent() && cFirstUp.isPresent()
        ? Fleet.calls(c, cAllDown.get(), cFirstUp.get()) : List.of();
    long cDownFailed = Fleet.failed(cDown);
    List<JsonNode> pAfter = Fleet.calls(p, pBack, pBack.plus(AFTER));
    List<JsonNode> cAfter = Fleet.calls(c, cBack, cBack.plus(AFTER));
    long cPanics = Callers.firstAt(c, "panic_on", blip).isPresent() ? 1 : 0;

    // Timeouts are not judged (see the class comment): a CI run with two modules' tests at once saw P fail 1 of 40
    // calls after its recovery, and a cold consumer's first calls time out at 300 ms on two loaded cores.
    boolean pass = !pBlip.isEmpty() && Fleet.failedOtherThanTimeout(pBlip) == 0 && panicOn.isPresent()
        && panicOff.isPresent() && !panicOff.get().isBefore(healed) && Fleet.failedOtherThanTimeout(cBlip) > 0
        && cPanics == 0 && !pAfter.isEmpty() && Fleet.failedOtherThanTimeout(pAfter) == 0 && !cAfter.isEmpty()
        && Fleet.failedOtherThanTimeout(cAfter) == 0;
    String figures = String.format("/health 503 on all 3 for %.1f s: P (panic threshold 50 %%) %d of %d calls failed"
            + " from the blip to its recovery%s, panic_on %s after the blip, panic_off %s after the heal;"
            + " C (--no-panic, the control) %d of %d failed, all three probed down from %s after the blip to its first"
            + " probe_up %s after the heal, %d of %d calls failed then; recovered (probe_up of all 3) P %d ms, C %d ms"
            + " after the heal; in the %d s after: P %d of %d failed%s, C %d of %d%s",
        Fleet.millis(blip, healed) / 1000.0, pFailed, pBlip.size(), Fleet.failures(pBlip),
        HealthLines.ms(blip, panicOn), HealthLines.ms(healed, panicOff), cFailed, cBlip.size(),
        HealthLines.ms(blip, cAllDown), HealthLines.ms(healed, cFirstUp), cDownFailed, cDown.size(),
        Fleet.millis(healed, pBack), Fleet.millis(healed, cBack), AFTER.toSeconds(), Fleet.failed(pAfter),
        pAfter.size(), Fleet.failures(pAfter), Fleet.failed(cAfter), cAfter.size(), Fleet.failures(cAfter));
    return ScenarioResult.of(this, pass, figures + HealthLines.stall(HealthLines.STALL, blip, last.plus(AFTER), p, c),
        "P 0 failures through the blip, panic_on during it and panic_off after the heal; C (no panic, the control)"
            + " fails; both 0 failures after they let all three back in (a call that timed out on a provider that"
            + " serves met the machine's load, not the routing: named with its error, not judged)");
  }

  /** When {@code consumer} had printed probe_up for all three at or after {@code healed} (the last of them). */
  private static Optional<Instant> recovered(ChildProcess consumer, Instant healed) {
    Instant last = null;
    for (String id : IDS) {
      Optional<Instant> up = HealthLines.first(consumer, "probe_up", id, healed);
      if (up.isEmpty()) {
        return Optional.empty();
      }
      last = last == null || up.get().isAfter(last) ? up.get() : last;
    }
    return Optional.of(last);
  }

  /** When {@code consumer} had printed probe_down for all three at or after {@code blip} (the last of them). */
  private static Optional<Instant> allDown(ChildProcess consumer, Instant blip) {
    Instant last = null;
    for (String id : IDS) {
      Optional<Instant> down = HealthLines.first(consumer, "probe_down", id, blip);
      if (down.isEmpty()) {
        return Optional.empty();
      }
      last = last == null || down.get().isAfter(last) ? down.get() : last;
    }
    return Optional.of(last);
  }
}
