package dev.muster.bench.dns;

import static dev.muster.bench.dns.DnsAbuseBench.CLIENT;
import static dev.muster.bench.dns.DnsAbuseBench.CLIENT_QPS;
import static dev.muster.bench.dns.DnsAbuseBench.CLIENT_TIMEOUT;
import static dev.muster.bench.dns.DnsAbuseBench.FLOOD;
import static dev.muster.bench.dns.DnsAbuseBench.FLOOD_QPS;
import static dev.muster.bench.dns.DnsAbuseBench.NEIGHBOUR;
import static dev.muster.bench.dns.DnsAbuseBench.PER_SERVICE;
import static dev.muster.bench.dns.DnsAbuseBench.SERVICES;
import static dev.muster.bench.dns.DnsAbuseBench.SLOW_SOURCE;
import static dev.muster.bench.dns.DnsAbuseBench.SLOW_TCP;
import static dev.muster.bench.dns.DnsAbuseBench.TCP_WINDOW;

import dev.muster.bench.dns.DnsAbuseBench.Mode;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/**
 * What {@link DnsAbuseBench} measured, row by row, and its table: floods, slow TCP clients and dnsperf, each in both
 * modes. Printed, never judged; {@link #failures} lists what could not be measured.
 */
public record DnsAbuseResult(List<FloodRow> floods, List<TcpRow> tcp, List<PerfRow> perf, List<String> notes,
    List<String> failures) {
  /** What a steady client got during a flood: answered whole, truncated (TC), lost (no reply within the timeout). */
  public record ClientView(String who, int asked, int answered, int truncated, int lost, Histogram micros) {
    double p99Ms() {
      return micros.getTotalCount() == 0 ? Double.NaN : micros.getValueAtPercentile(99) / 1000.0;
    }

    String cell() {
      return String.format(Locale.ROOT, "n=%d ans %.0f%% tc %.0f%% lost %.0f%% p99 %s", asked, pct(answered),
          pct(truncated), pct(lost), Double.isNaN(p99Ms()) ? "-" : String.format(Locale.ROOT, "%.1f ms", p99Ms()));
    }

    private double pct(int n) {
      return asked == 0 ? Double.NaN : 100.0 * n / asked;
    }
  }

  /** One flood: what the attacker sent, what landed on the victim's addresses, the gateway's view, the clients. */
  public record FloodRow(Mode mode, String scenario, long sent, long sentBytes, long landedReplies, long landedBytes,
      long gatewayIn, long gatewayOut, long rateLimited, long slipped, ClientView client, ClientView neighbour) {
    double amplification() {
      return sentBytes == 0 ? Double.NaN : landedBytes / (double) sentBytes;
    }
  }

  /** Slow TCP clients from one address, and a real client's TCP queries meanwhile. */
  public record TcpRow(Mode mode, int slowOpened, int slowClosedAtAccept, int slowOpenAtEnd, int asked, int answered,
      Histogram micros) {}

  public record PerfRow(Mode mode, DnsPerf.Options options, DnsPerf.Output out, long rateLimited, long slipped) {}

  public void print(PrintStream out) {
    out.println();
    out.printf("DNS gateway under abuse (issue 35, item 4): %d instances in %d services on a private etcd, the gateway"
        + " in this JVM; floods of %d s at up to %,d q/s from sockets bound to 127/8 addresses%n",
        SERVICES * PER_SERVICE, SERVICES, FLOOD.toSeconds(), FLOOD_QPS);
    out.printf("%-7s %-32s %8s %9s %9s %7s %7s %8s %7s  %-44s %s%n", "mode", "flood", "sent q", "sent KB",
        "back KB", "amplif", "gw o/i", "rrl drop", "slip", "client " + CLIENT + " (own /24)",
        "neighbour " + NEIGHBOUR + " (victim's /24)");
    for (FloodRow r : floods) {
      out.printf(Locale.ROOT, "%-7s %-32s %8d %9.1f %9.1f %7.2f %7.2f %8d %7d  %-44s %s%n", r.mode().label,
          r.scenario(), r.sent(), r.sentBytes() / 1024.0, r.landedBytes() / 1024.0, r.amplification(),
          r.gatewayIn() == 0 ? Double.NaN : r.gatewayOut() / (double) r.gatewayIn(), r.rateLimited(), r.slipped(),
          r.client().cell(), r.neighbour().cell());
    }
    out.println("  amplif: bytes that landed on the attacked addresses / bytes the attacker sent; gw o/i: UDP bytes"
        + " the gateway sent / received over the flood (the clients included); rrl drop, slip: queries the"
        + " gateway dropped, and answered with an empty TC reply, by response rate limiting; ans: a whole answer"
        + " over UDP, tc: a TC reply (a real client asks again over TCP), lost: no reply within "
        + CLIENT_TIMEOUT.toMillis() + " ms; p99 over the replies (answered and TC), n = queries asked ("
        + CLIENT_QPS + "/s each)");
    if (!tcp.isEmpty()) {
      out.printf("%-7s %-32s %8s %9s %9s  %s%n", "mode", "slow TCP clients", "opened", "refused", "open end",
          "client " + CLIENT + " over TCP meanwhile");
    }
    for (TcpRow r : tcp) {
      double p99 = r.micros().getTotalCount() == 0 ? Double.NaN : r.micros().getValueAtPercentile(99) / 1000.0;
      out.printf(Locale.ROOT, "%-7s %-32s %8d %9d %9d  n=%d answered %.0f%% p99 %s%n", r.mode().label,
          SLOW_TCP + " silent from " + SLOW_SOURCE, r.slowOpened(), r.slowClosedAtAccept(), r.slowOpenAtEnd(),
          r.asked(), r.asked() == 0 ? Double.NaN : 100.0 * r.answered() / r.asked(),
          Double.isNaN(p99) ? "-" : String.format(Locale.ROOT, "%.1f ms", p99));
    }
    if (!tcp.isEmpty()) {
      out.println("  refused: closed by the gateway at accept; open end: still open after " + TCP_WINDOW.toSeconds()
          + " s (never sending a byte); the client opens a connection for each query, every 100 ms");
    }
    if (!perf.isEmpty()) {
      out.printf("%-22s %8s %8s %8s %8s %10s %8s %9s %8s%n", "dnsperf, legit mix", "q/s", "p50 ms", "p99 ms",
          "max ms", "completed", "lost", "rrl drop", "slip");
    }
    for (PerfRow r : perf) {
      DnsPerf.Output o = r.out();
      out.printf(Locale.ROOT, "%-22s %8.0f %8.2f %8.2f %8.2f %10d %8d %9d %8d%n", r.mode().label, o.qps(),
          o.percentileMs(50), o.percentileMs(99), o.maxMs(), o.completed(), o.lost(), r.rateLimited(),
          r.slipped());
    }
    if (!perf.isEmpty()) {
      out.printf("  (dnsperf %s -e for %d s a row from %s, a mix of instance SRV, host A and service A over the %d"
          + " instances; \"before, limit off\": issue 17 with --rate-limit 0, as the dns section runs it; \"after,"
          + " dnsperf exempt\" adds --rrl-exempt %s/32, as a cluster's own resolver would be)%n",
          perf.get(0).options().label(), perf.get(0).options().seconds(), CLIENT, SERVICES * PER_SERVICE, CLIENT);
    }
    notes.forEach(n -> out.println("  note: " + n));
    failures.forEach(f -> out.println("  failed: " + f));
  }
}
