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
 * drain_before_revoke_in_flight through gRPC: a {@code grpc-serve} provider that gets SIGTERM publishes DRAINING
 * (health NOT_SERVING), keeps serving for the drain, sends GOAWAY, lets the calls in flight finish and only then
 * revokes its lease; a {@code muster} channel loses no call.
 *
 * <p>How: 3 providers, each draining 1 s; p1 has weight 200, the others 100. Consumer A ({@code grpc-call --policy
 * muster}, the lab's retries) calls Say every 50 ms asking the server to wait 700 ms ({@code --delay}), 1.5 s per
 * attempt, so about 14 calls are in flight at any moment. The muster policy picks weighted at random, so each is p1's
 * with probability 1/2 once A is past its start: then none of 14 is p1's 1 time in 16,000. Its start is not random —
 * calls made while its subchannels connect go to the first one READY, in runs — and one run on etcd 3.4.23 signalled
 * p1 1.9 s after A's first call, after 13 calls in a row to p2 and p3, with none of p1's in flight: so the signal
 * waits until A's last 10 answered calls include 3 of p1's. A watcher prints every set. p1 gets SIGTERM. From the
 * logs: when p1 published DRAINING and revoked, when the watcher saw DRAINING and the delete, A's failures from a
 * deadline before the signal on, the calls p1 answered that were in flight across DRAINING, and the calls p1
 * answered that started after the watcher saw DRAINING (reported: A's own cache may get the set a little after the
 * watcher, and grpc-call does not print its sets).
 *
 * <p>Consumer B ({@code round_robin}, no retry, the same calls within 1.5 s) is a control expected to pass, and the
 * scenario shows that Muster matches it: nothing here separates the policies, because what makes the drain lossless
 * is not in A's balancer. The {@code muster:///} resolver leaves DRAINING instances out of the addresses it gives
 * every channel, so B's {@code round_robin} stops picking p1 as soon as its own cache has DRAINING, like A; the
 * subchannel it drops shuts its transport down gracefully, so B's calls in flight on it finish; the server's GOAWAY
 * comes after the drain and lets its calls in flight finish too. A drain cut short (SIGKILL inside it) would fail the
 * calls still in flight there; that is the fault grpc_kill9_stale_window separates the policies with (A retries
 * them, B does not). docs/lab-grpc-controls.md cites the grpc-java source.
 */
public final class GrpcGracefulDrain implements Scenario {
  private static final Duration DELAY = Duration.ofMillis(700);
  private static final Duration DRAIN = Duration.ofSeconds(1);
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofMillis(1500);
  /** The signal waits until {@value #P1_RECENT} of A's last {@value #RECENT} answered calls are p1's. */
  private static final int RECENT = 10;
  private static final int P1_RECENT = 3;

  @Override
  public String name() {
    return "grpc_graceful_drain";
  }

  @Override
  public String shows() {
    return "SIGTERM a gRPC provider with 700 ms calls in flight: DRAINING, 1 s drain, GOAWAY, in-flight served, revoke;"
        + " muster policy (A) 0 failures; round_robin (B) the control expected to pass";
  }

  @Override
  public String seed() {
    return "beyond the seeds: gRPC (drain_before_revoke_in_flight through muster-grpc)";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.grpcProviders(ctx, "echo", endpoints, 3, i -> new String[] {"--drain", DRAIN.toSeconds() + "s",
        "--weight", i == 1 ? "200" : "100"})
        .grpcConsumers(ctx, endpoints, true, true, true, ATTEMPT_TIMEOUT, "--delay", DELAY.toMillis() + "ms");
    Duration deadline = ATTEMPT_TIMEOUT.multipliedBy(1L + ctx.params().maxRetries()); // a call, its retries included
    ChildProcess p1 = f.provider(1);
    ctx.await("A past its start (" + P1_RECENT + " of its last " + RECENT + " answered calls p1's)",
        Duration.ofSeconds(30), () -> recentlyAnsweredByP1(f.a) >= P1_RECENT);
    Instant term = Instant.now();
    p1.terminate();
    ctx.mark("sigterm", "p1");
    ctx.await("p1 revoked", Duration.ofSeconds(20), () -> p1.json().has("revoked"));
    Instant removed = f.awaitRemoved(ctx, "p1", term, Duration.ofSeconds(20));
    ctx.await("p1 exits", Duration.ofSeconds(20), () -> !p1.isAlive());
    ctx.sleep(deadline.plusMillis(500)); // every call started before the revoke has ended

    Optional<Instant> published = p1.json().events("draining").stream().map(JsonLog::ts).findFirst();
    Instant revoked = JsonLog.ts(p1.json().events("revoked").get(0));
    Optional<Instant> watcherSaw = Fleet.drainingAt(f.watcher, "p1", term);
    List<JsonNode> calls = Fleet.calls(f.a, term.minus(deadline), Instant.now());
    long failed = Fleet.failed(calls);
    List<JsonNode> bCalls = Fleet.calls(f.b, term.minus(ATTEMPT_TIMEOUT), Instant.now());
    Instant drainingAt = published.orElse(term);
    long inFlightServed = calls.stream().filter(c -> answeredByP1(c) && JsonLog.ts(c).isBefore(drainingAt)
        && Fleet.ended(c).isAfter(drainingAt)).count();
    long pickedAfterWatcher = watcherSaw.map(t -> calls.stream()
        .filter(c -> answeredByP1(c) && !JsonLog.ts(c).isBefore(t)).count()).orElse(-1L);
    long bInFlightServed = bCalls.stream().filter(c -> answeredByP1(c) && JsonLog.ts(c).isBefore(drainingAt)
        && Fleet.ended(c).isAfter(drainingAt)).count();
    long bPickedAfterWatcher = watcherSaw.map(t -> bCalls.stream()
        .filter(c -> answeredByP1(c) && !JsonLog.ts(c).isBefore(t)).count()).orElse(-1L);
    long drainToRevoke = Fleet.millis(drainingAt, revoked);
    // The drain's clock starts before the DRAINING put returns (the event's time), so the bound is from the signal.
    long termToRevoke = Fleet.millis(term, revoked);

    boolean pass = failed == 0 && published.isPresent() && watcherSaw.isPresent()
        && watcherSaw.get().isBefore(removed) && termToRevoke >= DRAIN.toMillis() && revoked.isAfter(drainingAt)
        && inFlightServed > 0;
    return ScenarioResult.of(this, pass, String.format("SIGTERM→DRAINING published %s ms, seen by the watcher %s ms;"
            + " DRAINING→revoked %d ms, SIGTERM→revoked %d ms (drain %d ms); SIGTERM→delete at the watcher %d ms;"
            + " %d calls in flight across DRAINING answered by p1; calls p1 answered that started after the watcher"
            + " saw DRAINING: %d; A failed %d of %d; B (round_robin, no retry, control expected to pass) failed %d of"
            + " %d, %d of its calls in flight across DRAINING answered by p1, %d started after the watcher saw"
            + " DRAINING%s",
        published.map(t -> Long.toString(Fleet.millis(term, t))).orElse("never"),
        watcherSaw.map(t -> Long.toString(Fleet.millis(term, t))).orElse("never"), drainToRevoke, termToRevoke,
        DRAIN.toMillis(),
        Fleet.millis(term, removed), inFlightServed, pickedAfterWatcher, failed, calls.size(), Fleet.failed(bCalls),
        bCalls.size(), bInFlightServed, bPickedAfterWatcher, Fleet.failures(bCalls)),
        "A failures = 0; the watcher sees p1 DRAINING before its delete; p1 revokes after DRAINING and at least"
            + " the drain after the SIGTERM; at least one call in flight across DRAINING is answered by p1; B's"
            + " figures reported, expected 0 failures (the control is expected to pass: the resolver drops DRAINING"
            + " for every policy, the server drains; Muster matches round_robin here)");
  }

  /** Of the caller's last {@link #RECENT} calls to end (its log is in the order calls end), those p1 answered. */
  private static long recentlyAnsweredByP1(ChildProcess caller) {
    List<JsonNode> calls = caller.json().events("call");
    return calls.subList(Math.max(0, calls.size() - RECENT), calls.size()).stream()
        .filter(GrpcGracefulDrain::answeredByP1).count();
  }

  private static boolean answeredByP1(JsonNode call) {
    return call.path("ok").asBoolean() && "p1".equals(call.path("attempts").path(0).asText());
  }
}
