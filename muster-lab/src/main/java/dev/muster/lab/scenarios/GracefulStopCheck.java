package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;

/**
 * graceful_stop_revokes_lease's check, on any fleet whose providers run with {@code --drain 0s}: SIGTERM one, wait
 * for its {@code revoked} line and for the watcher to drop it, and count consumer A's failures from the signal to a
 * second after. The key goes with the revoke, so the watcher sees it well under the lease TTL.
 *
 * @param termToRevokedMs the signal → the provider's {@code revoked} line
 * @param revokedToWatcherMs that line → the watcher's first set without the provider
 * @param termToWatcherMs the signal → that set
 * @param aFailed consumer A's failed calls from the signal to a second after the removal
 * @param ttl the lab's lease TTL: the removal must come well under it
 */
record GracefulStopCheck(long termToRevokedMs, long revokedToWatcherMs, long termToWatcherMs, long aFailed,
    Duration ttl) {
  static final String INVARIANT = "the delete reaches the watcher within 1 s of the revoke and under half the TTL"
      + " of the SIGTERM; A failures = 0";

  private static final Duration REVOKE_TO_WATCHER = Duration.ofSeconds(1);

  /** SIGTERMs {@code provider} (one of {@code f}'s) and measures. */
  static GracefulStopCheck run(LabContext ctx, Fleet f, ChildProcess provider) {
    String id = provider.name();
    Instant term = Instant.now();
    provider.terminate();
    ctx.mark("sigterm", id);
    ctx.await(id + " revoked", Duration.ofSeconds(15), () -> provider.json().has("revoked"));
    JsonNode revoked = provider.json().events("revoked").get(0);
    Instant removed = f.awaitRemoved(ctx, id, term, Duration.ofSeconds(15));
    ctx.sleep(Duration.ofSeconds(1));
    long failed = Fleet.failed(Fleet.calls(f.a, term, Instant.now()));
    return new GracefulStopCheck(Fleet.millis(term, JsonLog.ts(revoked)), Fleet.millis(JsonLog.ts(revoked), removed),
        Fleet.millis(term, removed), failed, ctx.params().ttl());
  }

  boolean passed() {
    return revokedToWatcherMs < REVOKE_TO_WATCHER.toMillis() && termToWatcherMs < ttl.toMillis() / 2 && aFailed == 0;
  }

  /** {@code SIGTERM→revoked 128 ms, revoked→watcher 23 ms, A failed 0}. */
  String summary() {
    return String.format("SIGTERM→revoked %d ms, revoked→watcher %d ms, A failed %d", termToRevokedMs,
        revokedToWatcherMs, aFailed);
  }
}
