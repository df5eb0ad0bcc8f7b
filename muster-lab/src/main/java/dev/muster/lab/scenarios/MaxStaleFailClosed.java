package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Bounded staleness: a consumer serves its last known set while etcd is down, but only for {@code maxStale}; then
 * its stale policy applies. {@code FAIL_CLOSED} (F) refuses every new call at once, saying why, until etcd answers
 * again; {@code KEEP_FAILING_ENDPOINTS_OUT} (K) goes on calling the endpoints whose last attempt succeeded within
 * {@code maxStale} (here all three, which still serve), so it fails nothing.
 *
 * <p>How: 3 providers; K and F (A-style: ejection after 1 failure, 1 retry, idempotent) call every 50 ms with
 * {@code --max-stale 30s} and their policy. etcd is SIGKILLed, left down 40 s (seed 001's drill: 30 s of outage
 * served from the cache, then refuse) and restarted on its data. From the logs: K's failures while etcd was down;
 * F's {@code stale} and {@code max_stale_reached} lines, its failures before and after the latter, the error it
 * printed; after the restart, F's {@code max_stale_cleared} and its first ok call.
 */
public final class MaxStaleFailClosed implements Scenario {
  private static final Duration INTERVAL = Duration.ofMillis(50);
  private static final Duration MAX_STALE = Duration.ofSeconds(30);
  private static final Duration DOWN = Duration.ofSeconds(40);
  /** max_stale_reached must come this close after the stale line (a timer on the client's scheduler). */
  private static final Duration REACHED_SLACK = Duration.ofSeconds(2);

  @Override
  public String name() {
    return "max_stale_fail_closed";
  }

  @Override
  public String shows() {
    return "etcd SIGKILLed for 40 s with --max-stale 30s: FAIL_CLOSED (F) refuses new calls after 30 s;"
        + " KEEP_FAILING_ENDPOINTS_OUT (K) keeps calling the endpoints that answer";
  }

  @Override
  public String seed() {
    return "seed 001's drill: serve 30 s of etcd outage from the cache, then refuse (\"registry unreachable for 31 s,"
        + " over maxStale 30 s\")";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3);
    Duration timeout = ctx.params().attemptTimeout();
    String maxStale = MAX_STALE.toSeconds() + "s";
    ChildProcess k = Callers.start(ctx, "consumer-k", f.service, endpoints, true, INTERVAL, timeout,
        "--max-stale", maxStale, "--stale-policy", "KEEP_FAILING_ENDPOINTS_OUT");
    ChildProcess fc = Callers.start(ctx, "consumer-f", f.service, endpoints, true, INTERVAL, timeout,
        "--max-stale", maxStale, "--stale-policy", "FAIL_CLOSED");
    f.awaitWarm(ctx, k, fc);

    Instant kill = Instant.now();
    etcd.member(0).kill();
    ctx.mark("etcd_sigkill", "m0");
    ctx.sleep(DOWN);
    etcd.member(0).restart();
    Instant answering = Instant.now();
    ctx.mark("etcd_answering", "m0 restarted");
    ctx.await("F clears max-stale and calls ok again (20 in a row)", Duration.ofSeconds(30), HealthLines.POLL,
        () -> Callers.firstAt(fc, "max_stale_cleared", kill).isPresent() && Callers.lastOk(fc, 20));
    ctx.sleep(Duration.ofMillis(500)); // calls started before the clear finish

    List<JsonNode> kDown = Fleet.calls(k, kill, answering);
    long kFailed = Fleet.failed(kDown);
    Optional<Instant> kReached = Callers.firstAt(k, "max_stale_reached", kill);
    Optional<Instant> stale = Callers.firstAt(fc, "stale", kill);
    Optional<Instant> reached = Callers.firstAt(fc, "max_stale_reached", kill);
    Instant cleared = Callers.firstAt(fc, "max_stale_cleared", kill).orElseThrow();
    List<JsonNode> fOutage = Fleet.calls(fc, kill, cleared);
    // A refusal is told by its error. The policy is in force a moment before the event line is stamped, so a call
    // started in between is refused although its start precedes the line: refusals are not counted by time.
    List<JsonNode> refused = fOutage.stream().filter(MaxStaleFailClosed::refusal).toList();
    Optional<Instant> firstRefusal = refused.stream().map(JsonLog::ts).findFirst();
    Instant refusing = firstRefusal.orElse(cleared);
    List<JsonNode> fBefore = Fleet.calls(fc, kill, refusing);
    long fFailedBefore = Fleet.failed(fBefore);
    // Until etcd answered (or F cleared, if that came first): a call started after it may be ok before the
    // max_stale_cleared line is stamped, as a refusal may start just before max_stale_reached's.
    Instant back = cleared.isBefore(answering) ? cleared : answering;
    List<JsonNode> fAfter = Fleet.calls(fc, refusing, back);
    long fFailedAfter = Fleet.failed(fAfter);
    long refusalsBeforeLine = reached.map(r -> refused.stream().filter(n -> JsonLog.ts(n).isBefore(r)).count())
        .orElse(0L);
    String error = refused.stream().map(n -> n.path("error").asText()).findFirst().orElse("none");
    Optional<Instant> fOk = fc.json().events("call").stream()
        .filter(n -> n.path("ok").asBoolean() && !JsonLog.ts(n).isBefore(cleared)).map(JsonLog::ts).findFirst();
    Optional<Long> staleToReached = stale.flatMap(s -> reached.map(r -> Fleet.millis(s, r)));
    Optional<Long> staleToRefusal = stale.flatMap(s -> firstRefusal.map(r -> Fleet.millis(s, r)));

    boolean pass = !kDown.isEmpty() && kFailed == 0 && kReached.isPresent() && reached.isPresent()
        && staleToRefusal.isPresent() && staleToRefusal.get() >= MAX_STALE.toMillis() - 100
        && staleToReached.get() <= MAX_STALE.plus(REACHED_SLACK).toMillis()
        && !fBefore.isEmpty() && fFailedBefore == 0 && fFailedAfter > 0 && fOk.isPresent();
    return ScenarioResult.of(this, pass, String.format("etcd down %.1f s, --max-stale 30s: K"
            + " (KEEP_FAILING_ENDPOINTS_OUT) %d of %d calls failed while etcd was down (its max_stale_reached %s"
            + " after the kill); F (FAIL_CLOSED) stale %s after the kill, max_stale_reached %s after its stale"
            + " line, first refused call %s after it (%d started before the line was stamped); F's failures %d of %d"
            + " before the first refusal, %d of %d from it until etcd answered, error \"%s\"; after the restart F"
            + " cleared max-stale %d ms after etcd answered and called ok again %s after that",
        Fleet.millis(kill, answering) / 1000.0, kFailed, kDown.size(), HealthLines.ms(kill, kReached),
        HealthLines.ms(kill, stale), staleToReached.map(v -> v + " ms").orElse("never"),
        staleToRefusal.map(v -> v + " ms").orElse("never"), refusalsBeforeLine, fFailedBefore, fBefore.size(),
        fFailedAfter, fAfter.size(), error, Fleet.millis(answering, cleared), HealthLines.ms(cleared, fOk))
        + HealthLines.stall(HealthLines.STALL, kill, cleared, k, fc),
        "K 0 failures for the whole outage; F 0 failures until it refuses, no refusal before 30 s after its stale"
            + " line and max_stale_reached within " + REACHED_SLACK.toSeconds() + " s past that, refuses new calls"
            + " after it, and calls ok again after etcd answers");
  }

  /** F refused the call because the registry was unreachable past maxStale (its error says so). */
  private static boolean refusal(JsonNode call) {
    return !call.path("ok").asBoolean() && call.path("error").asText().contains("over maxStale");
  }
}
