package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.StaleWindow;
import dev.muster.testing.ChildProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * kill9_stale_window's check, on any fleet with consumers A and B and a watcher: SIGKILL one provider, wait for the
 * watcher to drop it (its lease expires: no revoke), and count A's and B's calls and failures in that stale window.
 * A (ejection + retry) must ride through; B (neither) failing in the window is the negative control.
 *
 * @param window the SIGKILL → the watcher's first set without the provider, split where the provider logged renewals
 * @param aAttemptsToDead A's attempts that went to the dead address in the window
 * @param ttl the lab's lease TTL, which bounds the window
 */
record Kill9Check(StaleWindow window, long aFailed, int aCalls, long aAttemptsToDead, long bFailed, int bCalls,
    Duration ttl) {
  static final String INVARIANT = "A failures = 0; B fails in the window (the negative control); the window ends"
      + " within the TTL + 2 s";

  /** What etcd's expiry loop (500 ms in 3.4), the delete's delivery and a busy 2-core machine may add to the TTL. */
  private static final Duration SLACK = Duration.ofSeconds(2);

  /** SIGKILLs {@code provider} (one of {@code f}'s) and measures. */
  static Kill9Check run(LabContext ctx, Fleet f, ChildProcess provider) {
    String id = provider.name();
    Instant kill = Instant.now();
    provider.kill();
    ctx.mark("sigkill", id);
    Instant removed = f.awaitRemoved(ctx, id, kill, Duration.ofSeconds(20));
    ctx.sleep(Duration.ofMillis(500)); // calls started in the window finish
    List<JsonNode> a = Fleet.calls(f.a, kill, removed);
    List<JsonNode> b = Fleet.calls(f.b, kill, removed);
    return new Kill9Check(f.staleWindow(provider, kill, removed, ctx.params().ttl()), Fleet.failed(a), a.size(),
        Fleet.attemptsTo(a, id), Fleet.failed(b), b.size(), ctx.params().ttl());
  }

  boolean passed() {
    return aFailed == 0 && bFailed > 0 && windowWithinTtl();
  }

  private boolean windowWithinTtl() {
    return window.windowMs() <= ttl.plus(SLACK).toMillis();
  }

  /** {@code window 2498 ms; B 17 failures of 50 calls, A 0 of 50 (...); window = lease remainder + ...: 2498 = ...}. */
  String summary() {
    return String.format("window %d ms; B %d failures of %d calls, A %d of %d (A sent %d attempts to the dead"
        + " address); window = lease remainder + detection/delivery: %s ms", window.windowMs(), bFailed, bCalls,
        aFailed, aCalls, aAttemptsToDead, window);
  }
}
