package dev.muster.lab;

/** {@code LIMITS.md}: what this evidence does not prove. */
final class Limits {
  private Limits() {}

  static String text(LabParams p) {
    return """
        # What this evidence does not prove

        - Everything runs on one machine over loopback: no real network latency, loss, or asymmetric partitions.
          A "cut" or "black hole" is the fault proxy closing or holding TCP connections, not packets dropped by a
          router; SIGSTOP stands in for a GC pause or a frozen VM.
        - One run per scenario (three rounds where noted). The figures are samples, not distributions; a 2-core
          machine shared by etcd, several JVMs and the lab adds scheduling noise of tens of milliseconds.
        - Timings come from wall-clock timestamps written by different processes on the same host (microseconds,
          one clock); they would need clock sync across hosts.
        - The stale window's length is bounded below by the lease TTL (%s) and etcd's lease-expiry loop (checks
          every 500 ms in etcd 3.4); Muster cannot remove an address before etcd expires its lease.
        - "0 caller-visible failures" holds for idempotent GETs with one retry and enough healthy endpoints; it says
          nothing about non-idempotent calls, or about every endpoint failing at once.
        - Fresh JVMs are slow for their first requests; consumers are warmed up before a fault is injected, and the
          warm-up is not counted.
        - A call that timed out on the client may still have been applied by etcd (minority_partition shows a put
          abandoned during the partition applied after the heal); the registrar copes by recognising its own
          leases, but the lab does not prove every client-side timeout is harmless.
        - reconnect_storm runs its 50 caches in the lab's JVM, each with its own connection, not 50 processes.
        - forged_registration's forger writes with etcd's own client and no access control (the lab's etcd has
          none); it shows what a consumer serves, not what etcd's permissions would have stopped. Deleting or
          overwriting a signed record (making the provider vanish) is not prevented by signatures, and not shown.
        - etcd 3.4 (Debian) only; jetcd 0.8.6; Java 17.
        """.formatted(LabParams.format(p.ttl()));
  }
}
