package dev.muster.bench.scale;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.bench.curator.CuratorSessions;
import dev.muster.bench.curator.CuratorSide;
import dev.muster.bench.curator.ZooKeeperServer;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.EtcdMetrics;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.ProcStats;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.Wait;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationListener;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.JsonLog;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scale, on this machine (issue 19 §5; {@code ./muster bench --scale}, never in {@code --quick}): on one private
 * etcd member,
 * <ol>
 *   <li>{@code watchers} caches of one service in {@link Plan#jvms} consumer JVMs ({@link ScaleWatchers}, one
 *       connection each): register() → visible in all of them, etcd's CPU and memory, heap per cache; then
 *       {@link Plan#storms} reconnect storms ({@link StormRun}: etcd SIGKILL, {@link Plan#outage}, restart) with
 *       Muster's jitter;
 *   <li>as many storms with jitter off ({@link dev.muster.etcd.internal.NegativeControls#watchWithoutJitter});
 *   <li>the same watchers through {@code etcd grpc-proxy start}, which coalesces identical watches, and as many
 *       storms of etcd behind the running proxy;
 *   <li>{@code providers} registrations in {@link Plan#jvms} provider JVMs ({@link ScaleProviders}) at once: until
 *       all are visible in one cache, etcd's keepalive load (its own {@code /metrics}) and CPU, the registrars'
 *       keepalive answer times; and the same after an etcd SIGKILL and restart (etcd refreshes every lease);
 * </ol>
 * then, on a private 3-member cluster, a rolling restart under as many watchers connected to all three members:
 * each member SIGKILLed and restarted in turn, a storm each ({@link Plan#storms} rounds); and Curator's side on a
 * private ZooKeeper: as many {@code ServiceCache}s in as many JVMs (one session each), register → visible in all;
 * and as many provider sessions registering at once, with ZooKeeper's load.
 *
 * <p>Every process is started here and stopped by pid. Figures are printed, never judged. Runs on the calling
 * thread.
 */
public final class ScaleBench {
  /**
   * The sizes of a scale run.
   *
   * @param watchers caches of one service, split evenly over {@code jvms} consumer JVMs
   * @param providers registrations, split evenly over {@code jvms} provider JVMs
   * @param jvms consumer (and provider) JVMs
   * @param samples registrations timed until visible in every cache (after {@link #WARMUP})
   * @param outage how long etcd stays down in a reconnect storm
   * @param window how long keepalive load is measured, before and after etcd's restart
   * @param storms reconnect storms per fleet (direct with jitter on and off, through the proxy), and rounds of
   *     the rolling restart: each storm a row
   * @param steps the parts to run (all of them but in development)
   */
  public record Plan(int watchers, int providers, int jvms, int samples, Duration outage, Duration window,
      int storms, int warmupStorms, Set<Step> steps) {
    public Plan {
      if (watchers < jvms || providers < jvms) {
        throw new IllegalArgumentException(watchers + " watchers / " + providers + " providers over " + jvms
            + " JVMs: use at least one per JVM");
      }
      if (storms < 1) {
        throw new IllegalArgumentException(storms + " storms per fleet: use at least 1");
      }
      if (samples < 1) {
        throw new IllegalArgumentException(samples + " samples per fleet: use at least 1");
      }
      if (warmupStorms < 0) {
        throw new IllegalArgumentException(warmupStorms + " warm-up storms per fleet: use 0 or more");
      }
      steps = Set.copyOf(steps);
    }

    /** 10,000 watchers and 1,000 providers in 4 JVMs each (issue 19 §5), one storm per fleet, every step. */
    public static Plan full() {
      return new Plan(10_000, 1_000, 4, 20, Duration.ofSeconds(5), Duration.ofSeconds(20), 1, 0,
          EnumSet.allOf(Step.class));
    }

    public Plan withSizes(Integer watchers, Integer providers) {
      return new Plan(watchers == null ? this.watchers : watchers, providers == null ? this.providers : providers,
          jvms, samples, outage, window, storms, warmupStorms, steps);
    }

    public Plan withStorms(Integer storms) {
      return new Plan(watchers, providers, jvms, samples, outage, window, storms == null ? this.storms : storms,
          warmupStorms, steps);
    }

    public Plan withSamples(Integer samples) {
      return new Plan(watchers, providers, jvms, samples == null ? this.samples : samples, outage, window, storms,
          warmupStorms, steps);
    }

    /** {@code warmupStorms} unrecorded storms per fleet before the measured ones (null: as before). */
    public Plan withWarmupStorms(Integer warmupStorms) {
      return new Plan(watchers, providers, jvms, samples, outage, window, storms,
          warmupStorms == null ? this.warmupStorms : warmupStorms, steps);
    }

    /** Only {@code steps}, or every step when null or empty. */
    public Plan withSteps(Collection<Step> steps) {
      return new Plan(watchers, providers, jvms, samples, outage, window, storms, warmupStorms,
          steps == null || steps.isEmpty() ? EnumSet.allOf(Step.class) : EnumSet.copyOf(steps));
    }
  }

  /**
   * The parts of a scale run, in the order they run. Every one runs in a real measurement; a developer picks some
   * (BenchMain's hidden {@code --scale-steps}) to try a change without the rest.
   */
  public enum Step {
    /** Watchers on etcd directly: visibility, then the storms with jitter on. */
    direct,
    /** The storms with jitter off, on a fleet of their own. */
    jitter_off,
    /** Watchers through etcd grpc-proxy: visibility, then storms of etcd behind it. */
    proxy,
    /** Providers registering at once, keepalive load, an etcd restart under them. */
    providers,
    /** A storm per member of a 3-member cluster, in turn. */
    rolling,
    /** Curator's watchers and sessions on ZooKeeper. */
    curator
  }

  /** Registrations measured but not recorded first (connection and JIT warm-up in every JVM). */
  static final int WARMUP = 3;
  private static final Duration READY_LIMIT = Duration.ofMinutes(5);
  private static final Duration SEEN_LIMIT = Duration.ofSeconds(60);
  private static final String SERVICE = "scale";
  private static final HttpClient HEALTH = HttpClient.newBuilder().connectTimeout(Duration.ofMillis(500)).build();

  /**
   * register() → visible in every cache, and what etcd (and the proxy) spent meanwhile.
   *
   * @param visibleMs from the wall-clock time before register() to the last cache's listener, in ms
   * @param registerCallMs register()'s own time
   * @param etcdCores etcd's CPU over the samples, in cores; {@code proxyCores} likewise for the proxy (NaN: none)
   * @param heapPerCache consumer heap after GC per cache, in bytes
   */
  public record Visibility(String through, int caches, int jvms, Samples visibleMs, Samples registerCallMs,
      double etcdCores, long etcdRss, double proxyCores, long proxyRss, double heapPerCache, long readyMs,
      long threads) {}

  /**
   * Providers registered at once, then etcd restarted.
   *
   * @param allVisibleMs from GO until one cache held every instance
   * @param registeredMs from GO until the last register() returned
   * @param keepalivesPerSecond LeaseKeepAlive messages etcd received per second over the window
   * @param keepaliveUs the registrars' keepalive answer times over the window, in µs
   */
  public record Providers(int providers, int jvms, double allVisibleMs, double registeredMs, Load before,
      Load after, long restartMs, long removedDuringRestart, long leasesLost, long unreachable,
      double rawAllVisibleMs, double rawRegisteredMs, double sharedAllVisibleMs, double sharedRegisteredMs,
      Load shared) {}

  /**
   * Curator's providers: {@code providers} sessions registered at once, until all visible in one cache, and what
   * ZooKeeper received (requests and session pings: {@code mntr}'s {@code zk_packets_received}) over the window.
   */
  public record CuratorProviders(int providers, int jvms, double allVisibleMs, double registeredMs,
      double packetsPerSecond, double serverCores, long serverRss) {}

  /** Keepalive load over one window. */
  public record Load(double keepalivesPerSecond, double etcdCores, long etcdRss, Samples keepaliveUs) {}

  public record Result(Plan plan, List<Visibility> visibility, List<Storm> storms, Providers providers,
      CuratorProviders curatorProviders, List<String> notes, List<String> failures) {
    public void print(PrintStream out) {
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
      notes.forEach(n -> out.println("  note: " + n));
      failures.forEach(f -> out.println("  failed: " + f));
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
    public void csv(ResultTables report) {
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

  private final Plan plan;
  private final Path dir;
  private final PrintStream progress;
  private final List<Visibility> visibility = new ArrayList<>();
  private final List<Storm> storms = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();
  private Providers providers;
  private CuratorProviders curatorProviders;

  private ScaleBench(Plan plan, Path dir, PrintStream progress) {
    this.plan = plan;
    this.dir = dir;
    this.progress = progress;
  }

  public static Result run(Plan plan, Path dir, PrintStream progress) {
    ScaleBench b = new ScaleBench(plan, dir, progress);
    Set<Step> steps = plan.steps();
    if (steps.stream().anyMatch(EnumSet.of(Step.direct, Step.jitter_off, Step.proxy, Step.providers)::contains)) {
      try (EtcdCluster etcd = EtcdCluster.builder().members(1).build().start()) {
        progress.println("scale: started a private etcd member at " + etcd.endpointsString());
        b.step(Step.direct, "watchers, direct", () -> b.watchers(etcd));
        b.step(Step.jitter_off, "watchers, jitter off", () -> b.stormsWithoutJitter(etcd));
        b.step(Step.proxy, "watchers, grpc-proxy", () -> b.throughProxy(etcd));
        b.step(Step.providers, "providers", () -> b.providers(etcd));
      } catch (RuntimeException e) {
        b.failures.add("scale: " + e.getMessage());
      }
    }
    b.step(Step.rolling, "rolling restart, 3 members", b::rollingRestart);
    if (steps.contains(Step.curator)) {
      try (ZooKeeperServer zk = ZooKeeperServer.start(dir)) {
        progress.println("scale: started a private ZooKeeper " + zk.version() + " at " + zk.connectString());
        b.step(Step.curator, "Curator watchers", () -> b.curatorWatchers(zk));
        b.step(Step.curator, "Curator sessions", () -> b.curatorSessions(zk));
      } catch (RuntimeException e) {
        b.failures.add("scale, Curator: " + e.getMessage());
      }
    }
    return new Result(plan, List.copyOf(b.visibility), List.copyOf(b.storms), b.providers, b.curatorProviders,
        List.copyOf(b.notes), List.copyOf(b.failures));
  }

  /** Runs {@code body} when the plan has {@code step}; a failure is noted and the next step runs. */
  private void step(Step step, String name, Runnable body) {
    if (!plan.steps().contains(step)) {
      return;
    }
    try {
      body.run();
    } catch (RuntimeException e) {
      failures.add(name + ": " + e.getMessage());
      progress.println("scale: " + name + " failed: " + e.getMessage());
    }
  }

  private void watchers(EtcdCluster etcd) {
    try (WatcherFleet fleet = fleet(etcd.endpointsString(), "watchers", true)) {
      visibility.add(visible(etcd, fleet, "etcd directly", null));
      warmUp(etcd, fleet, "direct, jitter on");
      for (int i = 1; i <= plan.storms(); i++) {
        storms.add(StormRun.run(etcd, 0, fleet, "direct, jitter on" + numbered(i), plan.outage(), progress));
      }
    }
  }

  private void stormsWithoutJitter(EtcdCluster etcd) {
    try (WatcherFleet fleet = fleet(etcd.endpointsString(), "watchers-nojitter", false)) {
      warmUp(etcd, fleet, "direct, jitter off");
      for (int i = 1; i <= plan.storms(); i++) {
        storms.add(StormRun.run(etcd, 0, fleet, "direct, jitter off" + numbered(i), plan.outage(), progress));
      }
    }
  }

  /**
   * A rolling restart on a private 3-member cluster: as many watchers as the other fleets, connected to all three
   * members; each member SIGKILLed for the outage and restarted in turn, the next one only once every cache caught
   * up ({@link StormRun}), a row each.
   */
  private void rollingRestart() {
    try (EtcdCluster cluster = EtcdCluster.builder().members(3).build().start()) {
      progress.println("scale: started a private 3-member etcd cluster at " + cluster.endpointsString());
      try (WatcherFleet fleet = fleet(cluster.endpointsString(), "watchers-3members", true)) {
        for (int round = 1; round <= plan.storms(); round++) {
          for (EtcdMember m : cluster.members()) {
            storms.add(StormRun.run(cluster, m.index(), fleet, "3 members: " + m.name() + numbered(round),
                plan.outage(), progress));
          }
        }
      }
    }
  }

  /**
   * The plan's warm-up storms on {@code fleet}, not recorded: a fleet's first storm runs its recovery path (the
   * client's replacement, every watch created again) for the first time, in cold JVMs. A note says what they took.
   */
  private void warmUp(EtcdCluster etcd, WatcherFleet fleet, String name) {
    for (int i = 1; i <= plan.warmupStorms(); i++) {
      Storm s = StormRun.run(etcd, 0, fleet, name + ", warm-up " + i, plan.outage(), progress);
      notes.add(String.format(Locale.ROOT, "%s, warm-up storm %d (not in the table): caught up %.0f ms after etcd"
          + " answered, recovered p50 %.0f / max %.0f ms, %d stale, %d resyncs", name, i, s.caughtUpAfterAnswerMs(),
          s.recoveredMs().count() == 0 ? Double.NaN : s.recoveredAfterAnswerMs(50),
          s.recoveredMs().count() == 0 ? Double.NaN : s.recoveredAfterAnswerMs(100), s.wentStale(), s.resyncs()));
    }
  }

  /** " 2/5" for the second storm of five; nothing when the plan has one storm per fleet. */
  private String numbered(int storm) {
    return plan.storms() > 1 ? " " + storm + "/" + plan.storms() : "";
  }

  private void throughProxy(EtcdCluster etcd) {
    int port = freePort();
    EtcdMember member = etcd.member(0);
    // etcd 3.5's proxy dials its own advertised address for its /proxy/health check and exits when that does not
    // answer within 5 s; the default, 127.0.0.1:23790, is not where it listens here (3.4 only registers it).
    List<String> command = List.of(EtcdBinary.locate().toString(), "grpc-proxy", "start",
        "--endpoints=127.0.0.1:" + member.clientPort(), "--listen-addr=127.0.0.1:" + port,
        "--advertise-client-url=127.0.0.1:" + port);
    try (ChildProcess proxy = ChildProcess.start("grpc-proxy", command, dir.resolve("grpc-proxy.out"),
        dir.resolve("grpc-proxy.err"))) {
      Wait.until("etcd grpc-proxy to answer /health on 127.0.0.1:" + port, Duration.ofSeconds(30),
          Duration.ofMillis(50), () -> {
            if (!proxy.isAlive()) {
              throw new BenchException("etcd grpc-proxy exited: " + proxy.stderrTail());
            }
            return healthy(port);
          });
      progress.println("scale: etcd grpc-proxy (pid " + proxy.pid() + ") on 127.0.0.1:" + port);
      try (WatcherFleet fleet = fleet("http://127.0.0.1:" + port, "watchers-proxy", true)) {
        visibility.add(visible(etcd, fleet, "through grpc-proxy", proxy));
        warmUp(etcd, fleet, "grpc-proxy, jitter on");
        for (int i = 1; i <= plan.storms(); i++) {
          storms.add(StormRun.run(etcd, 0, fleet, "grpc-proxy, jitter on" + numbered(i), plan.outage(), progress));
          if (!proxy.isAlive()) {
            throw new BenchException("etcd grpc-proxy exited during the storm: " + proxy.stderrTail());
          }
        }
      }
    }
  }

  private WatcherFleet fleet(String endpoints, String name, boolean jitter) {
    progress.printf("scale: %,d caches in %d JVMs (%s, %s)...%n", plan.watchers(), plan.jvms(), name,
        jitter ? "jitter on" : "jitter off");
    WatcherFleet fleet = WatcherFleet.muster(dir, name, endpoints, SERVICE, plan.watchers(), plan.jvms(), jitter);
    try {
      fleet.awaitReady(READY_LIMIT);
    } catch (RuntimeException e) {
      fleet.close();
      throw e;
    }
    progress.printf("scale: %,d caches ready in %.1f s%n", fleet.caches(), fleet.readyMillis() / 1000.0);
    return fleet;
  }

  /** Registers instances one at a time from this JVM, each timed until the last cache has it. */
  private Visibility visible(EtcdCluster etcd, WatcherFleet fleet, String through, ChildProcess proxy) {
    long etcdPid = etcd.member(0).pid().orElseThrow();
    Samples visible = new Samples();
    Samples call = new Samples();
    RegistrarConfig config = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build();
    progress.printf("scale: register() -> visible in %,d caches, %s, %d samples...%n", fleet.caches(), through,
        plan.samples());
    double etcdCpu0 = Double.NaN;
    double proxyCpu0 = Double.NaN;
    long wall0 = 0;
    try (EtcdRegistry provider = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      for (int s = -WARMUP; s < plan.samples(); s++) {
        if (s == 0) {
          etcdCpu0 = ProcStats.cpuSeconds(etcdPid);
          proxyCpu0 = proxy == null ? Double.NaN : ProcStats.cpuSeconds(proxy.pid());
          wall0 = System.nanoTime();
        }
        String id = through.replace(' ', '-') + "-" + (s + WARMUP);
        long t0 = ScaleWatchers.epochMicros();
        long n0 = System.nanoTime();
        Registration r = provider.register(Instance.of(SERVICE, "127.0.0.1", 30_000 + s + WARMUP).id(id), config,
            RegistrationListener.NONE);
        long callNanos = System.nanoTime() - n0;
        long last = fleet.awaitSeen(id, SEEN_LIMIT);
        if (s >= 0) {
          visible.add((last - t0) / 1000.0);
          call.addNanos(callNanos);
        }
        r.close();
        Wait.sleep(Duration.ofMillis(500)); // the delete reaches every cache before the next sample
      }
    }
    double wall = (System.nanoTime() - wall0) / 1e9;
    double etcdCores = (ProcStats.cpuSeconds(etcdPid) - etcdCpu0) / wall;
    double proxyCores = proxy == null ? Double.NaN : (ProcStats.cpuSeconds(proxy.pid()) - proxyCpu0) / wall;
    Visibility v = new Visibility(through, fleet.caches(), plan.jvms(), visible, call, etcdCores,
        ProcStats.rssBytes(etcdPid).orElse(-1), proxyCores, proxy == null ? -1 : ProcStats.rssBytes(proxy.pid())
            .orElse(-1), fleet.heapPerCache(), fleet.readyMillis(), fleet.threads());
    progress.printf(Locale.ROOT, "scale: visible in all %,d: p50 %.1f ms, p99 %.1f ms%n", fleet.caches(),
        visible.p50(), visible.p99());
    return v;
  }

  private void providers(EtcdCluster etcd) {
    EtcdMember member = etcd.member(0);
    int per = plan.providers() / plan.jvms();
    int total = per * plan.jvms();
    // The raw floor first, on the same etcd, from the same kind of JVMs: bare jetcd grants and put-if-absent
    // transactions (ScaleRawProviders), then Muster's registrations of as many instances of another service.
    progress.printf("scale: raw floor: %,d jetcd grants + put-if-absent in %d JVMs...%n", total, plan.jvms());
    AtomicLong rawRemoved = new AtomicLong();
    Burst raw;
    try (EtcdRegistry consumer = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      try (Burst started = burst(etcd, consumer, ScaleRawProviders.class, SERVICE + "-raw", "raw", rawRemoved)) {
        raw = started;
      }
      // The raw leases (15 s, never renewed) expire before Muster's burst, so their expiry is not in its figures.
      Wait.until("the raw floor's leases to expire", Duration.ofSeconds(60), Duration.ofMillis(100),
          () -> raw.cache().current().isEmpty());
    }
    progress.printf(Locale.ROOT, "scale: raw floor: all %,d visible %.0f ms after GO%n", total, raw.allVisibleMs());
    progress.printf("scale: %,d providers in %d JVMs...%n", total, plan.jvms());
    AtomicLong removed = new AtomicLong();
    try (EtcdRegistry consumer = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
        Burst muster = burst(etcd, consumer, ScaleProviders.class, SERVICE + "-providers", "providers", removed)) {
      List<ChildProcess> jvms = muster.jvms();
      progress.printf(Locale.ROOT, "scale: all %,d visible %.0f ms after GO; keepalive load for %d s...%n", total,
          muster.allVisibleMs(), plan.window().toSeconds());
      Wait.sleep(Duration.ofSeconds(6)); // past the first keepalive of every registration
      Load before = load(member, jvms);
      long removed0 = removed.get();
      member.kill();
      long r0 = System.nanoTime();
      member.restart();
      long restartMs = (System.nanoTime() - r0) / 1_000_000;
      progress.printf("scale: etcd restarted in %d ms; keepalive load for %d s...%n", restartMs,
          plan.window().toSeconds());
      Wait.sleep(Duration.ofSeconds(6)); // every registrar's next keepalive comes within one interval (5 s)
      Load after = load(member, jvms);
      long lost = 0;
      long unreachable = 0;
      for (ChildProcess j : jvms) {
        List<JsonNode> lines = j.json().events("keepalives");
        if (!lines.isEmpty()) {
          lost += lines.get(lines.size() - 1).path("lost").asLong();
          unreachable += lines.get(lines.size() - 1).path("unreachable").asLong();
        }
      }
      providers = new Providers(total, plan.jvms(), muster.allVisibleMs(), muster.registeredMs(), before, after,
          restartMs, removed.get() - removed0, lost, unreachable, raw.allVisibleMs(), raw.registeredMs(), Double.NaN,
          Double.NaN, null);
    }
    // Last, the same burst with RegistrarConfig.sharedLease, once the default burst's leases (killed with their JVMs
    // above, so not revoked) have expired and their deletes cannot fall into it.
    try (EtcdRegistry consumer = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      EndpointCache left = consumer.watch(CacheConfig.builder(SERVICE + "-providers").build());
      left.awaitReady(Duration.ofSeconds(30));
      Wait.until("the default burst's leases to expire", Duration.ofSeconds(60), Duration.ofMillis(100),
          () -> left.current().isEmpty());
    }
    progress.printf("scale: %,d providers in %d JVMs with shared leases...%n", total, plan.jvms());
    try (EtcdRegistry consumer = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
        Burst shared = burst(etcd, consumer, ScaleProviders.class, SERVICE + "-shared", "shared", new AtomicLong(),
            List.of(ScaleProviders.SHARED))) {
      progress.printf(Locale.ROOT, "scale: shared leases: all %,d visible %.0f ms after GO%n", total,
          shared.allVisibleMs());
      Wait.sleep(Duration.ofSeconds(6)); // past the first keepalive of every registration
      Load load = load(member, shared.jvms());
      Providers p = providers;
      providers = new Providers(p.providers(), p.jvms(), p.allVisibleMs(), p.registeredMs(), p.before(), p.after(),
          p.restartMs(), p.removedDuringRestart(), p.leasesLost(), p.unreachable(), p.rawAllVisibleMs(),
          p.rawRegisteredMs(), shared.allVisibleMs(), shared.registeredMs(), load);
    }
  }

  /**
   * {@code plan.jvms()} JVMs of {@code main} (ScaleProviders or ScaleRawProviders) registering their share of the
   * providers of {@code service} at once when the go file appears; timed until one cache of {@code consumer} holds
   * them all. The JVMs stay up until the burst is closed (Muster's then keep their leases alive).
   */
  private Burst burst(EtcdCluster etcd, EtcdRegistry consumer, Class<?> main, String service, String name,
      AtomicLong removed) {
    return burst(etcd, consumer, main, service, name, removed, List.of());
  }

  /** As above; {@code extra} arguments follow the JVMs' usual ones. */
  private Burst burst(EtcdCluster etcd, EtcdRegistry consumer, Class<?> main, String service, String name,
      AtomicLong removed, List<String> extra) {
    int per = plan.providers() / plan.jvms();
    int total = per * plan.jvms();
    Path go = dir.resolve(name + ".go");
    try {
      Files.deleteIfExists(go);
    } catch (IOException e) {
      throw new BenchException("cannot remove " + go + ": " + e.getMessage());
    }
    AtomicLong full = new AtomicLong();
    EndpointCache cache = consumer.watch(CacheConfig.builder(service).build(), new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        removed.addAndGet(delta.removed().size());
        if (set.size() >= total) {
          full.compareAndSet(0, ScaleWatchers.epochMicros());
        }
      }
    });
    cache.awaitReady(Duration.ofSeconds(30));
    List<ChildProcess> jvms = new ArrayList<>();
    try {
      for (int j = 0; j < plan.jvms(); j++) {
        List<String> args = new ArrayList<>(List.of(etcd.endpointsString(), service, "p" + j + "-",
            Integer.toString(per), go.toString()));
        args.addAll(extra);
        jvms.add(Jvms.start(dir, name + "-" + j, WatcherFleet.FLAGS, main.getName(), args));
      }
      Wait.until(plan.jvms() + " " + name + " JVMs to connect", READY_LIMIT, Duration.ofMillis(50),
          () -> alive(jvms).stream().allMatch(j -> j.json().has("connected")));
      long etcdPid = etcd.member(0).pid().orElseThrow();
      double etcd0 = ProcStats.cpuSeconds(etcdPid);
      double jvms0 = jvms.stream().mapToDouble(j -> ProcStats.cpuSeconds(j.pid())).sum();
      double self0 = ProcStats.cpuSeconds(ProcessHandle.current().pid());
      long n0 = System.nanoTime();
      long t0 = ScaleWatchers.epochMicros();
      Files.createFile(go);
      Wait.until("all " + total + " " + name + " in the cache", Duration.ofMinutes(3), Duration.ofMillis(50),
          () -> full.get() != 0 && alive(jvms).stream().allMatch(j -> j.json().has("registered")));
      double wall = (System.nanoTime() - n0) / 1e9;
      Cpu cpu = new Cpu(wall, ProcStats.cpuSeconds(etcdPid) - etcd0,
          jvms.stream().mapToDouble(j -> ProcStats.cpuSeconds(j.pid())).sum() - jvms0,
          ProcStats.cpuSeconds(ProcessHandle.current().pid()) - self0);
      double allVisible = (full.get() - t0) / 1000.0;
      double registered = (jvms.stream().mapToLong(j -> j.json().firstEvent("registered").orElseThrow()
          .path("ts_us").asLong()).max().orElseThrow() - t0) / 1000.0;
      progress.printf(Locale.ROOT, "scale: %s burst: %s%n", name, cpu);
      notes.add(name + " burst: " + cpu);
      return new Burst(allVisible, registered, jvms, cache);
    } catch (IOException e) {
      jvms.forEach(ChildProcess::close);
      throw new BenchException("cannot create " + go + ": " + e.getMessage());
    } catch (RuntimeException e) {
      jvms.forEach(ChildProcess::close);
      throw e;
    }
  }

  /**
   * A burst of registrations: when all were visible and registered, the JVMs that made them (closed here), and the
   * cache that saw them (closed with its registry).
   */
  /**
   * Where a burst's CPU went, from GO until every registration was visible and returned (/proc, polled every 50 ms,
   * so the window is up to 50 ms longer than the burst): etcd, the provider JVMs together, and the bench's own JVM
   * (its consumer cache among other things). On this machine's 2 cores, a sum near 2 × wall means CPU-bound.
   */
  private record Cpu(double wallSeconds, double etcd, double providers, double bench) {
    @Override
    public String toString() {
      return String.format(Locale.ROOT, "CPU over %.2f s: etcd %.2f s, provider JVMs %.2f s, bench JVM %.2f s"
          + " (%.2f of 2 cores)", wallSeconds, etcd, providers, bench, (etcd + providers + bench) / wallSeconds);
    }
  }

  private record Burst(double allVisibleMs, double registeredMs, List<ChildProcess> jvms, EndpointCache cache)
      implements AutoCloseable {
    @Override
    public void close() {
      jvms.forEach(ChildProcess::close);
    }
  }

  /** Curator's ServiceCaches, as many as Muster's, in as many JVMs: until a registration is in all of them. */
  private void curatorWatchers(ZooKeeperServer zk) {
    progress.printf("scale: %,d Curator ServiceCaches in %d JVMs...%n", plan.watchers(), plan.jvms());
    try (WatcherFleet fleet = WatcherFleet.curator(dir, "curator-watchers", zk.connectString(), SERVICE,
        plan.watchers(), plan.jvms(), CuratorSide.SESSION);
        CuratorSide provider = CuratorSide.connect(zk.connectString())) {
      fleet.awaitReady(READY_LIMIT);
      progress.printf("scale: %,d Curator caches ready in %.1f s; register -> visible, %d samples...%n",
          fleet.caches(), fleet.readyMillis() / 1000.0, plan.samples());
      Samples visible = new Samples();
      Samples call = new Samples();
      double cpu0 = Double.NaN;
      long wall0 = 0;
      for (int s = -WARMUP; s < plan.samples(); s++) {
        if (s == 0) {
          cpu0 = ProcStats.cpuSeconds(zk.pid());
          wall0 = System.nanoTime();
        }
        String id = "curator-" + (s + WARMUP);
        long t0 = ScaleWatchers.epochMicros();
        long n0 = System.nanoTime();
        AutoCloseable registered = provider.register(SERVICE, id, 30_000 + s + WARMUP);
        long callNanos = System.nanoTime() - n0;
        long last = fleet.awaitSeen(id, SEEN_LIMIT);
        if (s >= 0) {
          visible.add((last - t0) / 1000.0);
          call.addNanos(callNanos);
        }
        try {
          registered.close();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new BenchException("unregister " + id + ": interrupted");
        } catch (Exception e) {
          throw new BenchException("unregister " + id + ": " + e.getMessage());
        }
        Wait.sleep(Duration.ofMillis(500));
      }
      double wall = (System.nanoTime() - wall0) / 1e9;
      visibility.add(new Visibility("Curator on ZooKeeper", fleet.caches(), plan.jvms(), visible, call,
          (ProcStats.cpuSeconds(zk.pid()) - cpu0) / wall, ProcStats.rssBytes(zk.pid()).orElse(-1), Double.NaN, -1,
          fleet.heapPerCache(), fleet.readyMillis(), fleet.threads()));
      progress.printf(Locale.ROOT, "scale: Curator, visible in all %,d: p50 %.1f ms, p99 %.1f ms%n",
          fleet.caches(), visible.p50(), visible.p99());
    }
  }

  /** Curator's providers: one session each, as many as Muster's registrations, registering at once. */
  private void curatorSessions(ZooKeeperServer zk) {
    String service = SERVICE + "-sessions";
    int per = plan.providers() / plan.jvms();
    int total = per * plan.jvms();
    Path go = dir.resolve("curator-sessions.go");
    AtomicLong full = new AtomicLong();
    List<ChildProcess> jvms = new ArrayList<>();
    progress.printf("scale: %,d Curator sessions in %d JVMs...%n", total, plan.jvms());
    try (CuratorSide consumer = CuratorSide.connect(zk.connectString())) {
      Files.deleteIfExists(go);
      consumer.watch(service, size -> {
        if (size >= total) {
          full.compareAndSet(0, ScaleWatchers.epochMicros());
        }
      });
      for (int j = 0; j < plan.jvms(); j++) {
        jvms.add(Jvms.start(dir, "curator-sessions-" + j, WatcherFleet.FLAGS, CuratorSessions.class.getName(),
            List.of(zk.connectString(), service, "c" + j + "-", Integer.toString(per), go.toString(),
                Long.toString(CuratorSide.SESSION.toMillis()))));
      }
      Wait.until(plan.jvms() + " Curator session JVMs to connect", READY_LIMIT, Duration.ofMillis(50),
          () -> alive(jvms).stream().allMatch(j -> j.json().has("connected")));
      double zk0 = ProcStats.cpuSeconds(zk.pid());
      double jvms0 = jvms.stream().mapToDouble(j -> ProcStats.cpuSeconds(j.pid())).sum();
      double self0 = ProcStats.cpuSeconds(ProcessHandle.current().pid());
      long burst0 = System.nanoTime();
      long t0 = ScaleWatchers.epochMicros();
      Files.createFile(go);
      Wait.until("all " + total + " Curator sessions' instances in the cache", Duration.ofMinutes(3),
          Duration.ofMillis(50), () -> full.get() != 0 && alive(jvms).stream().allMatch(j -> j.json().has("registered")));
      Cpu cpu = new Cpu((System.nanoTime() - burst0) / 1e9, ProcStats.cpuSeconds(zk.pid()) - zk0,
          jvms.stream().mapToDouble(j -> ProcStats.cpuSeconds(j.pid())).sum() - jvms0,
          ProcStats.cpuSeconds(ProcessHandle.current().pid()) - self0);
      notes.add("Curator sessions burst (the 'etcd' figure is ZooKeeper's): " + cpu);
      double allVisible = (full.get() - t0) / 1000.0;
      double registered = (jvms.stream().mapToLong(j -> j.json().firstEvent("registered").orElseThrow()
          .path("ts_us").asLong()).max().orElseThrow() - t0) / 1000.0;
      progress.printf(Locale.ROOT, "scale: Curator, all %,d visible %.0f ms after GO; ping load for %d s...%n",
          total, allVisible, plan.window().toSeconds());
      Wait.sleep(CuratorSide.SESSION); // past every session's first pings
      long p0 = zk.packetsReceived();
      double cpu0 = ProcStats.cpuSeconds(zk.pid());
      long n0 = System.nanoTime();
      Wait.sleep(plan.window());
      long p1 = zk.packetsReceived();
      double wall = (System.nanoTime() - n0) / 1e9;
      curatorProviders = new CuratorProviders(total, plan.jvms(), allVisible, registered, (p1 - p0) / wall,
          (ProcStats.cpuSeconds(zk.pid()) - cpu0) / wall, ProcStats.rssBytes(zk.pid()).orElse(-1));
    } catch (IOException e) {
      throw new BenchException("cannot create " + go + ": " + e.getMessage());
    } finally {
      jvms.forEach(ChildProcess::close);
    }
  }

  /** Keepalive load over the next {@link Plan#window}: etcd's counter and CPU, and the registrars' answer times. */
  private Load load(EtcdMember member, List<ChildProcess> jvms) {
    long pid = member.pid().orElseThrow();
    long k0 = EtcdMetrics.received(member.clientUrl(), "LeaseKeepAlive");
    double cpu0 = ProcStats.cpuSeconds(pid);
    long from = ScaleWatchers.epochMicros();
    long n0 = System.nanoTime();
    Wait.sleep(plan.window());
    long k1 = EtcdMetrics.received(member.clientUrl(), "LeaseKeepAlive");
    double wall = (System.nanoTime() - n0) / 1e9;
    double cores = (ProcStats.cpuSeconds(pid) - cpu0) / wall;
    long to = ScaleWatchers.epochMicros();
    Samples answers = new Samples();
    for (ChildProcess j : alive(jvms)) {
      for (JsonNode line : j.json().events("keepalives")) {
        var ts = JsonLog.ts(line);
        long us = ts.getEpochSecond() * 1_000_000 + ts.getNano() / 1_000;
        if (us >= from + ScaleProviders.REPORT_MICROS && us <= to) { // a line covers the 5 s before it
          line.path("answer_us").forEach(a -> answers.add(a.asLong()));
        }
      }
    }
    return new Load((k1 - k0) / wall, cores, ProcStats.rssBytes(pid).orElse(-1), answers);
  }

  private static List<ChildProcess> alive(List<ChildProcess> jvms) {
    for (ChildProcess j : jvms) {
      if (!j.isAlive()) {
        throw new BenchException(j.name() + " exited: " + j.stderrTail());
      }
    }
    return jvms;
  }

  private static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new BenchException("no free loopback port: " + e.getMessage());
    }
  }

  /** Whether the proxy on {@code port} answers {@code GET /health} with 200: it serves, and reaches etcd. */
  private static boolean healthy(int port) {
    try {
      HttpResponse<String> r = HEALTH.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
          .timeout(Duration.ofSeconds(1)).build(), HttpResponse.BodyHandlers.ofString());
      return r.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new BenchException("interrupted while waiting for etcd grpc-proxy");
    }
  }
}
