package dev.muster.bench.scale;

import dev.muster.bench.support.ProcStats;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.Wait;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One reconnect storm on a running fleet: an etcd member SIGKILLed, down for the outage, restarted; then a change
 * registered once it answered, timed until it is in every cache, every cache that went stale recovered, and a
 * {@link #TAIL} so that work still under way shows in etcd's load. Meanwhile {@link WatchSampler} reads what etcd's
 * Watch service receives, and each consumer JVM's connection counters are taken before and after.
 *
 * <p>The fleet may be connected to etcd directly, through a proxy in front of it, or to every member of a cluster;
 * the change is always registered on the cluster's own endpoints. In a cluster of more than one member the run
 * first waits until the cluster is healthy, so it never takes the quorum away.
 *
 * <p>Runs on the calling thread, the bench's measuring thread; the sampler and the CPU peak run on daemon threads.
 */
final class StormRun {
  /** After every cache caught up: resyncs or retries still running show in etcd's load and counters. */
  static final Duration TAIL = Duration.ofSeconds(3);
  private static final Duration LIMIT = Duration.ofMinutes(2);
  private static final String SERVICE = "scale";

  private StormRun() {}

  /**
   * Kills member {@code index} of {@code etcd} for {@code outage} under {@code fleet} and measures the storm. In a
   * cluster of several members the label gets the member's role when it was killed ({@code (leader)}).
   */
  static Storm run(EtcdCluster etcd, int index, WatcherFleet fleet, String label, Duration outage,
      PrintStream progress) {
    EtcdMember member = etcd.member(index);
    if (etcd.members().size() > 1) {
      etcd.awaitHealthy(LIMIT);
      label += etcd.leader().filter(l -> l.index() == index).isPresent() ? " (leader)" : " (follower)";
    }
    progress.printf("scale: reconnect storm, %,d caches, %s: kill -9 of %s for %d s...%n", fleet.caches(), label,
        member.name(), outage.toSeconds());
    long resyncs0 = fleet.resyncs();
    List<Map<String, Long>> connection0 = fleet.connectionStats();
    try (WatchSampler watch = new WatchSampler(etcd.endpoints()); Peaks peaks = new Peaks()) {
      for (EtcdMember other : etcd.members()) {
        if (other != member) {
          peaks.add(other.pid().orElseThrow());
        }
      }
      long killed = ScaleWatchers.epochMicros();
      member.kill();
      watch.killed(member.clientUrl());
      Wait.sleep(outage);
      long restartBegan = ScaleWatchers.epochMicros();
      member.restart();
      long answered = ScaleWatchers.epochMicros();
      peaks.add(member.pid().orElseThrow());
      try (EtcdRegistry marker = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
        String id = markerId(label);
        Registration r = marker.register(Instance.of(SERVICE, "127.0.0.1", 40_000).id(id),
            RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build(), RegistrationListener.NONE);
        long registered = ScaleWatchers.epochMicros();
        long caughtUp = fleet.awaitSeen(id, LIMIT);
        fleet.awaitNoneStale(caughtUp, LIMIT);
        List<Long> recoveries = fleet.recoveries(killed);
        long everyCache = Math.max(caughtUp, recoveries.stream().mapToLong(Long::longValue).max().orElse(0));
        r.close(); // its removal reaches the caches in the tail, not in the next storm
        Wait.sleep(TAIL);
        fleet.awaitStatsAfter(ScaleWatchers.epochMicros(), Duration.ofSeconds(10));
        Samples recovered = new Samples();
        recoveries.forEach(t -> recovered.add(millis(restartBegan, t)));
        WatchLoad load = WatchLoad.of(watch.readings(), killed, answered, everyCache);
        Replacements replacements = Replacements.between(connection0, fleet.connectionStats());
        Storm s = new Storm(label, fleet.caches(), millis(killed, restartBegan), millis(restartBegan, answered),
            millis(answered, registered), millis(restartBegan, caughtUp), recovered, fleet.wentStale(killed),
            fleet.resyncs() - resyncs0, peaks.cores(), peaks.rss(), load, replacements);
        progress.printf(Locale.ROOT, "scale: caught up %.0f ms after %s answered (%.0f ms after its restart began);"
            + " %d went stale; %,d watch messages at etcd, peak %,.0f/s; %s%n", s.caughtUpAfterAnswerMs(),
            member.name(), s.caughtUpMs(), s.wentStale(), s.watch().messages(), s.watch().peakMessagesPerSecond(),
            s.replacements().describe());
        return s;
      }
    }
  }

  /** From one epoch-µs instant to another, in ms. */
  private static double millis(long fromMicros, long toMicros) {
    return (toMicros - fromMicros) / 1000.0;
  }

  /**
   * The members' CPU, each sampled on its own thread: the survivors from the kill, the restarted member from when
   * it answered. The storm's peak is the busiest member's busiest second; its RSS, the largest high-water mark.
   */
  private static final class Peaks implements AutoCloseable {
    private final List<ProcStats.PeakCpu> members = new java.util.ArrayList<>();

    void add(long pid) {
      members.add(new ProcStats.PeakCpu(pid, 100));
    }

    double cores() {
      return members.stream().mapToDouble(ProcStats.PeakCpu::peakCores).filter(c -> !Double.isNaN(c)).max()
          .orElse(Double.NaN);
    }

    long rss() {
      return members.stream().mapToLong(p -> ProcStats.peakRssBytes(p.pid()).orElse(-1)).max().orElse(-1);
    }

    @Override
    public void close() {
      members.forEach(ProcStats.PeakCpu::close);
    }
  }

  /** The change's instance id: the label in an instance id's alphabet, {@code storm-3-members-m0-2-5-leader}. */
  static String markerId(String label) {
    String id = ("storm-" + label.toLowerCase(Locale.ROOT)).replaceAll("[^a-z0-9]+", "-").replaceAll("-+$", "");
    return id.length() <= 63 ? id : id.substring(0, 63).replaceAll("-+$", "");
  }
}
