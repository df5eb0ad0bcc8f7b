package dev.muster.bench.scale;

import dev.muster.bench.curator.ZooKeeperServer;
import dev.muster.bench.report.ResultTables;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.ProcStats;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.Wait;
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
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

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
 * thread. The providers' bursts are {@link ProviderBursts}, Curator's side {@link CuratorScale}, the tables {@link
 * ScaleReport}.
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
  static final Duration READY_LIMIT = Duration.ofMinutes(5);
  static final Duration SEEN_LIMIT = Duration.ofSeconds(60);
  static final String SERVICE = "scale";
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
      ScaleReport.print(this, out);
    }

    /** The same figures as rows of results.csv, section {@code scale}. */
    public void csv(ResultTables report) {
      ScaleReport.csv(this, report);
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
        b.step(Step.providers, "providers", () -> new ProviderBursts(plan, dir, progress, b.notes)
            .run(etcd, p -> b.providers = p));
      } catch (RuntimeException e) {
        b.failures.add("scale: " + e.getMessage());
      }
    }
    b.step(Step.rolling, "rolling restart, 3 members", b::rollingRestart);
    if (steps.contains(Step.curator)) {
      try (ZooKeeperServer zk = ZooKeeperServer.start(dir)) {
        progress.println("scale: started a private ZooKeeper " + zk.version() + " at " + zk.connectString());
        CuratorScale curator = new CuratorScale(plan, dir, progress, b.notes);
        b.step(Step.curator, "Curator watchers", () -> b.visibility.add(curator.watchers(zk)));
        b.step(Step.curator, "Curator sessions", () -> curator.sessions(zk, c -> b.curatorProviders = c));
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


  /** {@code jvms}, once each is checked alive: one that exited fails the step with its stderr's tail. */
  static List<ChildProcess> alive(List<ChildProcess> jvms) {
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
