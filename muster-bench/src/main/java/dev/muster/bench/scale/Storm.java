package dev.muster.bench.scale;

import dev.muster.bench.support.Samples;

/**
 * One reconnect storm: an etcd member SIGKILLed, down for the plan's outage, restarted, until a change made once it
 * answered had reached every cache and each cache that went stale had recovered.
 *
 * <p>The times are in ms from when the member's restart began (its process was started again), as they were
 * measured: {@code answeredMs} until it answered {@code /version}, {@code caughtUpMs} until the change was in every
 * cache, {@code recoveredMs} until each stale cache recovered (empty when none went stale). The figures from when it
 * answered, the measure ("every cache caught up ≤ 2.0 s after etcd answered"), are these minus
 * {@code answeredMs}; from the kill, plus {@code downMs} (from the kill until the restart began).
 *
 * @param label which fleet and which storm, e.g. {@code direct, jitter on 2/5} or {@code 3 members: m1 (leader)}
 * @param registerMs from when the member answered until the change was written (a fresh {@code EtcdRegistry}
 *     connected and its {@code register()} returned): part of {@code caughtUpMs}, the change's own cost
 * @param wentStale times a cache went stale, counted at its recovery
 * @param resyncs full resyncs summed over the caches
 * @param etcdPeakCores the busiest member's busiest second, in cores: the restarted member from when it answered,
 *     the others (in a cluster) from the kill
 * @param etcdPeakRss the largest of the members' peak RSS (the restarted member's since its restart)
 */
public record Storm(String label, int caches, double downMs, double answeredMs, double registerMs,
    double caughtUpMs, Samples recoveredMs,
    long wentStale, long resyncs, double etcdPeakCores, long etcdPeakRss, WatchLoad watch,
    Replacements replacements) {
  /** From when the member answered until the change was in every cache. */
  public double caughtUpAfterAnswerMs() {
    return caughtUpMs - answeredMs;
  }

  /** A percentile of the recoveries, from when the member answered (negative: the cache recovered before it). */
  public double recoveredAfterAnswerMs(double percentile) {
    return recoveredMs.percentile(percentile) - answeredMs;
  }

  /** A percentile of the recoveries, from the kill. */
  public double recoveredAfterKillMs(double percentile) {
    return recoveredMs.percentile(percentile) + downMs;
  }
}
