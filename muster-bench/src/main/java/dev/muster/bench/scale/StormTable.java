package dev.muster.bench.scale;

import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.Samples;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** The scale section's reconnect storms as a table in results.txt and as rows of results.csv. */
final class StormTable {
  private StormTable() {}

  static void print(PrintStream out, List<Storm> storms, Duration outage) {
    if (storms.isEmpty()) {
      return;
    }
    int width = Math.max(24, storms.stream().mapToInt(s -> s.label().length()).max().orElse(0));
    out.printf("reconnect storms: an etcd member SIGKILLed for %d s, then restarted%n", outage.toSeconds());
    out.printf("%-" + width + "s %7s %9s %10s %25s %7s %8s %10s %8s%n", "storm", "caches", "answered",
        "caught up", "recovered p50/p99/max", "stale", "resyncs", "etcd peak", "etcd MB");
    for (Storm s : storms) {
      Samples r = s.recoveredMs();
      out.printf(Locale.ROOT, "%-" + width + "s %,7d %6.0f ms %7.0f ms %25s %7d %8d %10.2f %8.0f%n", s.label(),
          s.caches(), s.answeredMs(), s.caughtUpAfterAnswerMs(), r.isEmpty() ? "-"
              : String.format(Locale.ROOT, "%.0f / %.0f / %.0f ms", s.recoveredAfterAnswerMs(50),
                  s.recoveredAfterAnswerMs(99), s.recoveredAfterAnswerMs(100)),
          s.wentStale(), s.resyncs(), s.etcdPeakCores(), s.etcdPeakRss() / 1e6);
      out.printf(Locale.ROOT, "  the change was written %.0f ms after the member answered; from the restart's start:"
          + " caught up %.0f ms, recovered %s; from the kill: recovered %s%n", s.registerMs(),
          s.caughtUpMs(), r.isEmpty() ? "-" : String.format(Locale.ROOT, "%.0f / %.0f / %.0f ms",
          r.p50(), r.p99(), r.max()), r.isEmpty() ? "-" : String.format(Locale.ROOT, "%.0f / %.0f / %.0f ms",
          s.recoveredAfterKillMs(50), s.recoveredAfterKillMs(99), s.recoveredAfterKillMs(100)));
      out.println("  " + watch(s.watch()));
      out.println("  " + s.replacements().describe());
    }
    out.println("  (answered: ms from when the member's restart began (its process started again) until it answered"
        + " /version, polled every 50 ms. caught up and recovered: ms from when it answered, the issue's measure"
        + " (target: every cache caught up <= 2.0 s after etcd answered), until a change made then was in every"
        + " cache, and until each stale cache recovered (negative: before the member answered, on another one); the"
        + " line under each row gives both from the restart's start, and the recoveries from the kill. caught up"
        + " includes writing the change: a fresh connection and its register(), timed in that line. stale: times a cache went stale; etcd peak and etcd"
        + " MB: the busiest second in cores and the peak RSS of the busiest member, the restarted one from when it"
        + " answered, the others from the kill)");
    out.println("  (watch at etcd: each member's /metrics, read every " + WatchSampler.PERIOD.toMillis() + " ms from"
        + " the kill to the end of a " + StormRun.TAIL.toSeconds() + " s tail after every cache caught up, summed over"
        + " the members. messages: grpc_server_msg_received_total{grpc_type=\"bidi_stream\","
        + "grpc_service=\"etcdserverpb.Watch\",grpc_method=\"Watch\"}, every message received on Watch streams:"
        + " creates, cancels, and progress requests (a cache asks after 10 s without an event, so the fleet's come in"
        + " bursts); streams: grpc_server_started_total with the same labels, Watch streams opened, creates alone"
        + " (jetcd 0.8.6 opens one stream per watch). peak: the busiest second (between two readings 1 s apart);"
        + " recovery: from the last reading before etcd answered to the first after every cache caught up)");
    out.println("  (replacements: each consumer JVM's EtcdRegistry.connectionStats() after the storm minus before it:"
        + " client replacements by reason per JVM, and what became of the caches' failure reports, summed over the"
        + " JVMs. grpc-proxy rows: the caches are connected to etcd grpc-proxy and etcd behind it is killed. 3 members"
        + " rows: a fleet connected to all three members of a cluster; each member is killed in turn, the next only"
        + " once every cache caught up and the cluster is healthy)");
  }

  private static String watch(WatchLoad w) {
    if (w.readings() == 0) {
      return "watch at etcd: no reading of its /metrics";
    }
    return String.format(Locale.ROOT, "watch at etcd: %,d messages (peak %,.0f/s; %,.0f/s over the %.1f s of"
        + " recovery), %,d streams opened (peak %,.0f/s; %,.0f/s over the recovery)", w.messages(),
        w.peakMessagesPerSecond(), w.meanMessagesPerSecond(), w.recoverySeconds(), w.streams(),
        w.peakStreamsPerSecond(), w.meanStreamsPerSecond());
  }

  static void csv(ResultTables report, List<Storm> storms) {
    for (Storm s : storms) {
      String m = "reconnect storm, " + s.label() + ", " + s.caches() + " caches";
      report.csvRow("scale", m + ": etcd answered after its restart began", "ms", "etcd", "", "", "", "",
          num(s.answeredMs()));
      report.csvRow("scale", m + ": change written after etcd answered", "ms", "muster", "", "", "", "",
          num(s.registerMs()));
      report.csvRow("scale", m + ": caught up after etcd answered", "ms", "muster", "", "", "", "",
          num(s.caughtUpAfterAnswerMs()));
      report.csvRow("scale", m + ": caught up after etcd's restart began", "ms", "muster", "", "", "", "",
          num(s.caughtUpMs()));
      Samples r = s.recoveredMs();
      if (!r.isEmpty()) {
        report.csvRow("scale", m + ": recovered after etcd answered", "ms", "muster", Integer.toString(r.count()),
            num(s.recoveredAfterAnswerMs(50)), num(s.recoveredAfterAnswerMs(99)), num(s.recoveredAfterAnswerMs(100)),
            "");
        report.csvRow("scale", m + ": recovered after etcd's restart began", "ms", "muster",
            Integer.toString(r.count()), num(r.p50()), num(r.p99()), num(r.max()), "");
        report.csvRow("scale", m + ": recovered after the kill", "ms", "muster", Integer.toString(r.count()),
            num(s.recoveredAfterKillMs(50)), num(s.recoveredAfterKillMs(99)), num(s.recoveredAfterKillMs(100)), "");
      }
      report.csvRow("scale", m + ": went stale", "caches", "muster", "", "", "", "", Long.toString(s.wentStale()));
      report.csvRow("scale", m + ": resyncs", "count", "muster", "", "", "", "", Long.toString(s.resyncs()));
      report.csvRow("scale", m + ": etcd peak CPU", "cores", "etcd", "", "", "", "", num(s.etcdPeakCores()));
      report.csvRow("scale", m + ": etcd peak RSS", "bytes", "etcd", "", "", "", "", Long.toString(s.etcdPeakRss()));
      WatchLoad w = s.watch();
      if (w.readings() > 0) {
        report.csvRow("scale", m + ": watch messages at etcd", "count", "etcd", "", "", "", "",
            Long.toString(w.messages()));
        report.csvRow("scale", m + ": watch messages at etcd, peak second", "per second", "etcd", "", "", "", "",
            num(w.peakMessagesPerSecond()));
        report.csvRow("scale", m + ": watch messages at etcd, over the recovery", "per second", "etcd", "", "", "",
            "", num(w.meanMessagesPerSecond()));
        report.csvRow("scale", m + ": watch streams opened at etcd", "count", "etcd", "", "", "", "",
            Long.toString(w.streams()));
        report.csvRow("scale", m + ": watch streams opened at etcd, peak second", "per second", "etcd", "", "", "",
            "", num(w.peakStreamsPerSecond()));
        report.csvRow("scale", m + ": watch streams opened at etcd, over the recovery", "per second", "etcd", "", "",
            "", "", num(w.meanStreamsPerSecond()));
      }
      Replacements c = s.replacements();
      for (String key : c.keys()) { // samples: JVMs; max: the most in one JVM; value: the sum over them
        long most = c.perJvm().stream().mapToLong(j -> j.getOrDefault(key, 0L)).max().orElse(0);
        report.csvRow("scale", m + ": connection " + key, "count", "muster", Integer.toString(c.perJvm().size()),
            "", "", Long.toString(most), Long.toString(c.total(key)));
      }
    }
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
  }
}
