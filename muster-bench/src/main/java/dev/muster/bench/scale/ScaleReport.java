package dev.muster.bench.scale;

import dev.muster.bench.report.ResultTables;
import dev.muster.bench.scale.ScaleBench.CuratorProviders;
import dev.muster.bench.scale.ScaleBench.Load;
import dev.muster.bench.scale.ScaleBench.Providers;
import dev.muster.bench.scale.ScaleBench.Visibility;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** The scale section's figures ({@link ScaleBench.Result}) as tables in results.txt and as rows of results.csv. */
final class ScaleReport {
  private ScaleReport() {}

  static void print(ScaleBench.Result result, PrintStream out) {
    ScaleBench.Plan plan = result.plan();
    List<Visibility> visibility = result.visibility();
    List<Storm> storms = result.storms();
    Providers providers = result.providers();
    CuratorProviders curatorProviders = result.curatorProviders();
    out.println();
    out.printf("8. Scale: one etcd member (and a 3-member cluster for the rolling restart), %d consumer JVMs of"
        + " %,d caches in all, %,d providers in %d JVMs (all on this machine's %d cores)%n", plan.jvms(),
        plan.watchers(), plan.providers(), plan.jvms(), Runtime.getRuntime().availableProcessors());
    if (!visibility.isEmpty()) {
      out.printf("%-26s %7s %9s %9s %9s %8s %9s %8s %9s %9s %9s %8s%n", "register() -> visible in all",
          "caches", "p50 ms", "p99 ms", "max ms", "call ms", "srv cpu", "srv MB", "proxy cpu", "proxy MB",
          "B/cache", "ready s");
    }
    for (Visibility v : visibility) {
      boolean proxied = !Double.isNaN(v.proxyCores());
      out.printf(Locale.ROOT, "%-26s %,7d %9.1f %9.1f %9.1f %8.1f %9.2f %8.0f %9s %9s %9.0f %8.1f%n",
          v.through(), v.caches(), v.visibleMs().p50(), v.visibleMs().p99(), v.visibleMs().max(),
          v.registerCallMs().p50(), v.etcdCores(), v.etcdRss() / 1e6,
          proxied ? String.format(Locale.ROOT, "%.2f", v.proxyCores()) : "-",
          proxied ? String.format(Locale.ROOT, "%.0f", v.proxyRss() / 1e6) : "-", v.heapPerCache(),
          v.readyMs() / 1000.0);
    }
    if (!visibility.isEmpty()) {
      out.printf("  (%d samples each; call ms: the registration call's own p50; srv cpu: cores etcd (or ZooKeeper)"
          + " used over the samples; srv MB: its RSS after them; B/cache: consumer heap after GC per cache; ready"
          + " s: first cache to all ready, slowest JVM)%n", visibility.get(0).visibleMs().count());
    }
    StormTable.print(out, storms, plan.outage());
    if (providers != null) {
      Providers p = providers;
      out.printf(Locale.ROOT, "%,d providers in %d JVMs at once: all visible in one cache %.0f ms after GO, the"
          + " last register() returned at %.0f ms%n", p.providers(), p.jvms(), p.allVisibleMs(), p.registeredMs());
      out.printf(Locale.ROOT, "  raw floor, the same %,d as bare jetcd lease grants + put-if-absent transactions"
          + " from %d JVMs: all visible %.0f ms after GO, the last answered at %.0f ms; Muster %.2fx the floor%n",
          p.providers(), p.jvms(), p.rawAllVisibleMs(), p.rawRegisteredMs(), p.allVisibleMs() / p.rawAllVisibleMs());
      load(out, "  keepalives, steady", p.before());
      out.printf(Locale.ROOT, "  etcd kill -9 + restart (%d ms to answer): %d instance(s) removed meanwhile, %d"
          + " lease(s) lost, %d registrar(s) saw etcd unreachable%n", p.restartMs(), p.removedDuringRestart(),
          p.leasesLost(), p.unreachable());
      load(out, "  keepalives, after restart", p.after());
      if (!Double.isNaN(p.sharedAllVisibleMs())) {
        out.printf(Locale.ROOT, "  with RegistrarConfig.sharedLease (one lease per provider JVM, live before GO as a Curator session is):"
            + " all visible %.0f ms after GO, the last register() returned at %.0f ms; %.2fx the floor%n",
            p.sharedAllVisibleMs(), p.sharedRegisteredMs(), p.sharedAllVisibleMs() / p.rawAllVisibleMs());
        load(out, "  keepalives, steady, shared leases", p.shared());
      }
    }
    if (curatorProviders != null) {
      CuratorProviders c = curatorProviders;
      out.printf(Locale.ROOT, "Curator: %,d sessions in %d JVMs at once: all visible in one cache %.0f ms after GO,"
          + " the last registerService() returned at %.0f ms; steady: ZooKeeper received %.0f packets/s, %.2f"
          + " cores, %.0f MB%n", c.providers(), c.jvms(), c.allVisibleMs(), c.registeredMs(), c.packetsPerSecond(),
          c.serverCores(), c.serverRss() / 1e6);
    }
    result.notes().forEach(n -> out.println("  note: " + n));
    result.failures().forEach(f -> out.println("  failed: " + f));
  }

  private static void load(PrintStream out, String label, Load l) {
    if (l == null) {
      return;
    }
    out.printf(Locale.ROOT, "%s: %.0f/s at etcd, etcd %.2f cores, %.0f MB; answered p50 %.2f / p99 %.2f / max"
        + " %.2f ms (%d keepalives)%n", label, l.keepalivesPerSecond(), l.etcdCores(), l.etcdRss() / 1e6,
        l.keepaliveUs().p50() / 1000, l.keepaliveUs().p99() / 1000, l.keepaliveUs().max() / 1000,
        l.keepaliveUs().count());
  }

  /** The same figures as rows of results.csv, section {@code scale}. */
  static void csv(ScaleBench.Result result, ResultTables report) {
    List<Visibility> visibility = result.visibility();
    List<Storm> storms = result.storms();
    Providers providers = result.providers();
    CuratorProviders curatorProviders = result.curatorProviders();
    for (Visibility v : visibility) {
      String m = "register -> visible in " + v.caches() + " caches, " + v.through();
      report.csvRow("scale", m, "ms", "muster", Integer.toString(v.visibleMs().count()), num(v.visibleMs().p50()),
          num(v.visibleMs().p99()), num(v.visibleMs().max()), "");
      report.csvRow("scale", m + ": etcd CPU", "cores", "etcd", "", "", "", "", num(v.etcdCores()));
      report.csvRow("scale", m + ": etcd RSS", "bytes", "etcd", "", "", "", "", Long.toString(v.etcdRss()));
      report.csvRow("scale", m + ": heap per cache", "bytes", "muster", "", "", "", "", num(v.heapPerCache()));
      if (!Double.isNaN(v.proxyCores())) {
        report.csvRow("scale", m + ": proxy CPU", "cores", "grpc-proxy", "", "", "", "", num(v.proxyCores()));
      }
    }
    StormTable.csv(report, storms);
    if (curatorProviders != null) {
      CuratorProviders c = curatorProviders;
      String m = c.providers() + " Curator sessions";
      report.csvRow("scale", m + ": all visible after GO", "ms", "curator", "", "", "", "", num(c.allVisibleMs()));
      report.csvRow("scale", m + ", steady: packets at ZooKeeper", "per second", "zookeeper", "", "", "", "",
          num(c.packetsPerSecond()));
      report.csvRow("scale", m + ", steady: ZooKeeper CPU", "cores", "zookeeper", "", "", "", "",
          num(c.serverCores()));
    }
    if (providers != null) {
      Providers p = providers;
      String m = p.providers() + " providers";
      report.csvRow("scale", m + ": all visible after GO", "ms", "muster", "", "", "", "", num(p.allVisibleMs()));
      report.csvRow("scale", m + ": all visible after GO", "ms", "raw floor", "", "", "", "", num(p.rawAllVisibleMs()));
      if (!Double.isNaN(p.sharedAllVisibleMs())) {
        report.csvRow("scale", m + ": all visible after GO", "ms", "muster, shared lease", "", "", "", "",
            num(p.sharedAllVisibleMs()));
      }
      for (var e : List.of(java.util.Map.entry("steady", p.before()), java.util.Map.entry("after restart",
          p.after()))) {
        Load l = e.getValue();
        if (l == null) {
          continue;
        }
        report.csvRow("scale", m + ", " + e.getKey() + ": keepalives at etcd", "per second", "etcd", "", "", "",
            "", num(l.keepalivesPerSecond()));
        report.csvRow("scale", m + ", " + e.getKey() + ": etcd CPU", "cores", "etcd", "", "", "", "",
            num(l.etcdCores()));
        report.csvRow("scale", m + ", " + e.getKey() + ": keepalive answered", "ms", "muster",
            Integer.toString(l.keepaliveUs().count()), num(l.keepaliveUs().p50() / 1000),
            num(l.keepaliveUs().p99() / 1000), num(l.keepaliveUs().max() / 1000), "");
      }
    }
  }

  private static String num(double v) {
    return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.3f", v);
  }
}
