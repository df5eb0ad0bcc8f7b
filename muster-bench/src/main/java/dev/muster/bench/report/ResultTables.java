package dev.muster.bench.report;

import dev.muster.bench.JmhSuite;
import dev.muster.bench.grpc.GrpcBench;
import dev.muster.bench.support.Metric;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.SideResult;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The bench's results as tables: five on the console (microbenchmarks; Muster end to end with the raw-jetcd floor;
 * Muster next to Curator; Muster on a plain etcd next to a mutual-TLS one; the gRPC adapter next to gRPC's
 * round_robin) and the same figures as CSV, one row per
 * figure, headed by the machine line. In the CSV, {@code floor_p50} and {@code ratio} compare a row with its
 * baseline: the raw-jetcd floor in section {@code etcd}, the plain member in section {@code tls}.
 *
 * <p>Not thread-safe; built once after the measurements.
 */
public final class ResultTables {
  /** Everything measured in one run. A section that was skipped or failed is null or empty. */
  public record Run(String mode, String machine, List<JmhSuite.Row> jmh, SideResult muster, SideResult floor,
      SideResult curator, String curatorLabel, SideResult plainEtcd, SideResult tlsEtcd, SideResult grpcMuster,
      SideResult grpcRoundRobin) {}

  private static final String[] CSV_COLUMNS = {"section", "metric", "unit", "system", "samples", "p50", "p99",
      "max", "value", "floor_p50", "ratio", "min"};

  private static final String[][] LATENCY_ROWS = {
      {"register() -> visible, 1 cache", Metric.visible(1)},
      {"  of which the call (floor: put) returned", Metric.visibleCall(1)},
      {"register() -> visible, 10 caches", Metric.visible(10)},
      {"register() -> visible, 100 caches", Metric.visible(100)},
      {"close() -> gone, 1 cache", Metric.gone(1)},
      {"  of which the call (floor: revoke) returned", Metric.goneCall(1)},
      {"close() -> gone, 10 caches", Metric.gone(10)},
      {"close() -> gone, 100 caches", Metric.gone(100)},
      {"kill -9 -> gone from a cache", Metric.KILL9_GONE},
      {"  of which lease remainder", Metric.KILL9_REMAINDER},
      {"  of which expiry detection + delivery", Metric.KILL9_DETECTION},
      {"full resync, range + build + publish", Metric.BUILD},
  };

  private static final String[][] TLS_ROWS = {
      {"register() -> visible, 1 cache", Metric.visible(1)},
      {"  of which the call returned", Metric.visibleCall(1)},
      {"close() -> gone, 1 cache", Metric.gone(1)},
      {"  of which the call returned", Metric.goneCall(1)},
  };

  private final Run f;
  private final List<String> csv = new ArrayList<>();

  public ResultTables(Run figures) {
    this.f = figures;
    csv.add(String.join(",", CSV_COLUMNS));
  }

  public void print(PrintStream out) {
    out.println();
    out.println("Muster bench (" + f.mode() + ")");
    out.println("machine: " + f.machine());
    jmh(out);
    endToEnd(out);
    sideBySide(out);
    tlsCost(out);
    grpc(out);
  }

  public void writeCsv(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      List<String> lines = new ArrayList<>();
      lines.add("# machine: " + f.machine().replace(',', ';'));
      lines.add("# mode: " + f.mode());
      lines.addAll(csv);
      Files.write(file, lines);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * One more CSV row, for a section that prints its own table: {@code section, metric, unit, system, samples, p50,
   * p99, max, value} (the columns after those left empty).
   */
  public void csvRow(String section, String metric, String unit, String system, String samples, String p50,
      String p99, String max, String value) {
    csv.add(row(section, metric, unit, system, samples, p50, p99, max, value));
  }

  private void jmh(PrintStream out) {
    if (f.jmh() == null || f.jmh().isEmpty()) {
      return;
    }
    out.println();
    out.println("1. Microbenchmarks (JMH, ns/op ± 99.9% error; B/op from -prof gc)");
    out.printf("%-32s %-32s %7s %22s %10s%n", "benchmark", "params", "threads", "ns/op", "B/op");
    for (JmhSuite.Row r : f.jmh()) {
      out.printf(Locale.ROOT, "%-32s %-32s %7d %22s %10.1f%n", r.benchmark(), r.params(), r.threads(),
          String.format(Locale.ROOT, "%.1f ± %.1f", r.nsPerOp(), r.error()), r.bytesPerOp());
      csv.add(row("jmh", r.benchmark() + " " + r.params() + " threads=" + r.threads(), "ns/op",
          "muster", "", "", "", "", num(r.nsPerOp()), "", ""));
      csv.add(row("jmh", r.benchmark() + " " + r.params() + " threads=" + r.threads(), "B/op",
          "muster", "", "", "", "", num(r.bytesPerOp()), "", ""));
    }
  }

  private void endToEnd(PrintStream out) {
    if (f.muster() == null) {
      return;
    }
    out.println();
    out.println("2. Muster end to end on etcd (ms; floor = raw jetcd in the same run; ratio = Muster / floor)");
    out.printf("%-54s %8s %8s %8s | %8s %8s %8s | %6s %6s%n", "metric", "p50", "p99", "max", "floor50", "floor99",
        "floormax", "x p50", "x p99");
    for (String[] row : LATENCY_ROWS) {
      Samples m = f.muster().latencies().get(row[1]);
      if (m == null || m.isEmpty()) {
        continue;
      }
      Samples fl = f.floor().latencies().get(row[1]);
      boolean hasFloor = fl != null && !fl.isEmpty();
      out.printf(Locale.ROOT, "%-54s %8.1f %8.1f %8.1f | %8s %8s %8s | %6s %6s%n", row[0] + " (n=" + m.count() + ")",
          m.p50(), m.p99(), m.max(), hasFloor ? fmt(fl.p50()) : "-", hasFloor ? fmt(fl.p99()) : "-",
          hasFloor ? fmt(fl.max()) : "-", hasFloor ? ratio(m.p50(), fl.p50()) : "-",
          hasFloor ? ratio(m.p99(), fl.p99()) : "-");
      csvLatency("etcd", row[0], "muster", m, hasFloor ? fl.p50() : Double.NaN);
      if (hasFloor) {
        csvLatency("etcd", row[0], "floor", fl, Double.NaN);
      }
    }
    Double eps = f.muster().values().get(Metric.EVENTS_PER_SECOND);
    Double floorEps = f.floor().values().get(Metric.EVENTS_PER_SECOND);
    if (eps != null) {
      out.printf(Locale.ROOT, "%-54s %8.0f %19s %8s %26s%n", "events/s applied, 10,000 cached", eps, "|",
          floorEps == null ? "-" : String.format(Locale.ROOT, "%.0f", floorEps),
          floorEps == null ? "-" : ratio(eps, floorEps));
      csv.add(row("etcd", "events applied per second", "events/s", "muster", "", "", "", "", num(eps),
          floorEps == null ? "" : num(floorEps), floorEps == null ? "" : num(eps / floorEps)));
    }
    Double heap = f.muster().values().get(Metric.HEAP_PER_INSTANCE);
    if (heap != null) {
      out.printf(Locale.ROOT, "%-54s %8.0f%n", "retained heap per cached instance, B", heap);
      csv.add(row("etcd", "retained heap per cached instance", "bytes", "muster", "", "", "", "",
          num(heap), "", ""));
    }
    notes(out, "muster", f.muster().notes());
  }

  private void sideBySide(PrintStream out) {
    if (f.curator() == null || f.muster() == null) {
      return;
    }
    out.println();
    out.println("3. Muster vs " + f.curatorLabel() + " (ratio = Muster / Curator; below 1 = Muster ahead)");
    out.printf("%-40s %12s %12s %8s%n", "metric", "Muster", "Curator", "ratio");
    for (String[] row : LATENCY_ROWS) {
      if (row[0].startsWith("  ")) {
        continue;
      }
      Samples m = f.muster().latencies().get(row[1]);
      Samples c = f.curator().latencies().get(row[1]);
      if (m == null || c == null || m.isEmpty() || c.isEmpty()) {
        continue;
      }
      String name = row[1].equals(Metric.BUILD) ? "cache build of 10,000" : row[0];
      compare(out, name + ", p50 ms", m.p50(), c.p50(), "ms");
      compare(out, name + ", p99 ms", m.p99(), c.p99(), "ms");
    }
    Double mh = f.muster().values().get(Metric.HEAP_PER_INSTANCE);
    Double ch = f.curator().values().get(Metric.HEAP_PER_INSTANCE);
    if (mh != null && ch != null) {
      compare(out, "retained heap per cached instance, B", mh, ch, "bytes");
    }
    Double mc = f.muster().values().get(Metric.CALLS);
    Double mf = f.muster().values().get(Metric.CALLS_FAILED);
    Double cc = f.curator().values().get(Metric.CALLS);
    Double cf = f.curator().values().get(Metric.CALLS_FAILED);
    if (mc != null && cc != null) {
      out.printf(Locale.ROOT, "%-40s %12s %12s %8s%n", "calls failed in kill -9 windows",
          String.format(Locale.ROOT, "%.0f/%.0f", mf, mc), String.format(Locale.ROOT, "%.0f/%.0f", cf, cc),
          ratio(mf / mc, cf / cc));
      csv.add(row("curator", "calls failed in kill -9 windows", "share", "muster", num(mc), "", "", "",
          num(mf / mc), "", ""));
      csv.add(row("curator", "calls failed in kill -9 windows", "share", "curator", num(cc), "", "", "",
          num(cf / cc), "", ""));
    }
    notes(out, "curator", f.curator().notes());
  }

  private void tlsCost(PrintStream out) {
    if (f.plainEtcd() == null) {
      return;
    }
    out.println();
    out.println("4. TLS cost on etcd (ms; a plain and a mutual-TLS member in the same run, samples in turns;"
        + " ratio = TLS p50 / plain p50)");
    out.printf("%-40s %8s %8s %8s %8s | %8s %8s %8s %8s | %6s%n", "metric", "plainmin", "plain50", "plain99",
        "plainmax", "tlsmin", "tls50", "tls99", "tlsmax", "x p50");
    for (String[] row : TLS_ROWS) {
      Samples p = f.plainEtcd().latencies().get(row[1]);
      Samples t = f.tlsEtcd().latencies().get(row[1]);
      if (p == null || t == null || p.isEmpty() || t.isEmpty()) {
        continue;
      }
      out.printf(Locale.ROOT, "%-40s %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f | %6s%n",
          row[0] + " (n=" + t.count() + ")", p.min(), p.p50(), p.p99(), p.max(),
          t.min(), t.p50(), t.p99(), t.max(), ratio(t.p50(), p.p50()));
      csvLatency("tls", row[0], "plain", p, Double.NaN);
      csvLatency("tls", row[0], "tls", t, p.p50());
    }
    notes(out, "tls", f.plainEtcd().notes());
  }

  private void grpc(PrintStream out) {
    if (f.grpcMuster() == null) {
      return;
    }
    SideResult m = f.grpcMuster();
    SideResult r = f.grpcRoundRobin();
    out.println();
    out.println("5. gRPC: the muster policy next to round_robin (ms; same resolver, same etcd, in the same run;"
        + " ratio = muster / round_robin)");
    out.printf("%-46s %8s %8s %8s %8s | %8s %8s %8s %8s | %6s%n", "metric", "mmin", "m50", "m99", "mmax",
        "rrmin", "rr50", "rr99", "rrmax", "x p50");
    String[][] rows = {{"register() -> first RPC, fresh channel", GrpcBench.FIRST_RPC},
        {"  of which register() returned", GrpcBench.FIRST_RPC_REGISTER}};
    for (String[] row : rows) {
      Samples a = m.latencies().get(row[1]);
      Samples b = r.latencies().get(row[1]);
      if (a == null || b == null || a.isEmpty() || b.isEmpty()) {
        continue;
      }
      out.printf(Locale.ROOT, "%-46s %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f | %6s%n",
          row[0] + " (n=" + a.count() + ")", a.min(), a.p50(), a.p99(), a.max(), b.min(), b.p50(), b.p99(),
          b.max(), ratio(a.p50(), b.p50()));
      csvLatency("grpc", row[0], "muster", a, Double.NaN);
      csvLatency("grpc", row[0], "round_robin", b, a.p50());
    }
    Double mc = m.values().get(GrpcBench.KILL_CALLS);
    Double mf = m.values().get(GrpcBench.KILL_FAILED);
    Double rc = r.values().get(GrpcBench.KILL_CALLS);
    Double rf = r.values().get(GrpcBench.KILL_FAILED);
    if (mc != null && rc != null) {
      out.printf(Locale.ROOT, "%-46s %35s | %35s%n", "calls failed in kill -9 windows", "muster + retry",
          "round_robin + outlier detection");
      out.printf(Locale.ROOT, "%-46s %35s | %35s%n", "", String.format(Locale.ROOT, "%.0f/%.0f", mf, mc),
          String.format(Locale.ROOT, "%.0f/%.0f", rf, rc));
      csv.add(row("grpc", "calls failed in kill -9 windows", "share", "muster", num(mc), "", "", "",
          num(mf / mc), "", ""));
      csv.add(row("grpc", "calls failed in kill -9 windows", "share", "round_robin", num(rc), "", "", "",
          num(rf / rc), "", ""));
    }
    notes(out, "muster", m.notes());
    notes(out, "round_robin", r.notes());
  }

  private void compare(PrintStream out, String name, double muster, double curator, String unit) {
    out.printf(Locale.ROOT, "%-40s %12.1f %12.1f %8s%n", name, muster, curator, ratio(muster, curator));
    csv.add(row("curator", name, unit, "muster", "", "", "", "", num(muster), "", ""));
    csv.add(row("curator", name, unit, "curator", "", "", "", "", num(curator), "",
        num(muster / curator)));
  }

  private void csvLatency(String section, String metric, String system, Samples s, double floorP50) {
    csv.add(row(section, metric.trim(), "ms", system, Integer.toString(s.count()), num(s.p50()),
        num(s.p99()), num(s.max()), "", Double.isNaN(floorP50) ? "" : num(floorP50),
        Double.isNaN(floorP50) ? "" : num(s.p50() / floorP50), num(s.min())));
  }

  private static void notes(PrintStream out, String side, List<String> notes) {
    for (String n : notes) {
      out.println("  note (" + side + "): " + n);
    }
  }

  /**
   * One CSV row (RFC 4180: a field with a comma or a quote is quoted, quotes doubled); columns left off at the
   * end are empty.
   */
  private static String row(String... fields) {
    if (fields.length > CSV_COLUMNS.length) {
      throw new IllegalArgumentException(fields.length + " fields for " + CSV_COLUMNS.length + " columns");
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < CSV_COLUMNS.length; i++) {
      String f = i < fields.length ? fields[i] : "";
      if (i > 0) {
        sb.append(',');
      }
      sb.append(f.contains(",") || f.contains("\"") ? "\"" + f.replace("\"", "\"\"") + "\"" : f);
    }
    return sb.toString();
  }

  private static String ratio(double a, double b) {
    if (Double.isNaN(a) || Double.isNaN(b) || b == 0) {
      return a == 0 && b == 0 ? "=" : "-";
    }
    return String.format(Locale.ROOT, "%.2f", a / b);
  }

  private static String fmt(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
  }
}
