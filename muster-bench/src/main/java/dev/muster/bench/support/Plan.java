package dev.muster.bench.support;

import java.time.Duration;
import java.util.List;

/**
 * The sizes of one end-to-end run, the same for Muster and for Curator so their rows compare like with like.
 * {@link #quick()} fits {@code ./muster bench --quick} (under 3 minutes in all), {@link #full()} the full run.
 *
 * @param cacheCounts how many consumer caches watch the service in the register→visible / close→gone rows
 * @param visibleSamples registrations (and graceful closes) measured per cache count
 * @param tlsSamples registrations (and graceful closes) measured on each of the plain and the TLS cluster, one
 *     consumer cache each, for the TLS-cost rows (100 in the full run, so that p99 is not simply the maximum)
 * @param killSamples providers killed with SIGKILL for the kill -9 → gone row
 * @param bulkInstances instances in the registry for the full-resync / cache-build, throughput and heap rows
 * @param bulkRepeats full resyncs (cache builds) measured
 * @param throughputEvents updates written while one cache holds {@code bulkInstances} (events/s row)
 * @param callRounds kill -9 rounds with a caller running (failures a caller sees)
 * @param ttl etcd lease TTL; the ZooKeeper session timeout is set to the same
 * @param keepalive Muster's keepalive interval
 * @param callInterval time between the caller's calls
 * @param attemptTimeout deadline of each call attempt
 * @param ejectionTime how long an endpoint that failed once is left out (Muster's ejection, Curator's
 *     DownInstancePolicy timeout)
 * @param seed the kill schedule's random seed (gaps between kills); a new one each run unless given, so the kills'
 *     phase in the keepalive / ping cycle does not repeat from run to run
 */
public record Plan(
    List<Integer> cacheCounts,
    int visibleSamples,
    int tlsSamples,
    int killSamples,
    int bulkInstances,
    int bulkRepeats,
    int throughputEvents,
    int callRounds,
    Duration ttl,
    Duration keepalive,
    Duration callInterval,
    Duration attemptTimeout,
    Duration ejectionTime,
    long seed) {

  public Plan {
    cacheCounts = List.copyOf(cacheCounts);
  }

  /** Providers behind the caller in the kill -9 call rows (one of them is killed per round). */
  public static final int CALL_PROVIDERS = 3;

  /** How long after a kill the caller's calls are counted: the TTL plus this. */
  public static final Duration CALL_WINDOW_EXTRA = Duration.ofSeconds(2);

  public Duration callWindow() {
    return ttl.plus(CALL_WINDOW_EXTRA);
  }

  public static Plan quick(long seed) {
    return new Plan(List.of(1, 10, 100), 15, 30, 3, 10_000, 3, 10_000, 1, Duration.ofSeconds(3),
        Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(2), seed);
  }

  public static Plan full(long seed) {
    return new Plan(List.of(1, 10, 100), 100, 100, 20, 10_000, 10, 50_000, 3, Duration.ofSeconds(3),
        Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofMillis(300), Duration.ofSeconds(2), seed);
  }
}
