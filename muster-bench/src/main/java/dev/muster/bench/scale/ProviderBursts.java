package dev.muster.bench.scale;

import static dev.muster.bench.scale.ScaleBench.READY_LIMIT;
import static dev.muster.bench.scale.ScaleBench.SERVICE;
import static dev.muster.bench.scale.ScaleBench.alive;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.bench.scale.ScaleBench.Load;
import dev.muster.bench.scale.ScaleBench.Plan;
import dev.muster.bench.scale.ScaleBench.Providers;
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
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.JsonLog;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The scale section's providers ({@link ScaleBench.Step#providers}): {@link Plan#providers} registrations in {@link
 * Plan#jvms} provider JVMs at once, against the raw floor (bare jetcd grants and put-if-absent transactions from as
 * many JVMs, {@link ScaleRawProviders}), with etcd's keepalive load and an etcd SIGKILL and restart under them, then
 * the same burst with {@code RegistrarConfig.sharedLease}. Runs on the calling thread; every JVM it starts is closed
 * by the time it returns.
 */
final class ProviderBursts {
  private final Plan plan;
  private final Path dir;
  private final PrintStream progress;
  private final List<String> notes;

  ProviderBursts(Plan plan, Path dir, PrintStream progress, List<String> notes) {
    this.plan = plan;
    this.dir = dir;
    this.progress = progress;
    this.notes = notes;
  }

  /**
   * The providers step: the raw floor's burst, Muster's burst with its keepalive load before and after an etcd
   * SIGKILL and restart, then the same burst with shared leases. Each figure goes to {@code result} as soon as it
   * is known, so a later part's failure keeps the earlier ones.
   */
  void run(EtcdCluster etcd, Consumer<Providers> result) {
    Providers providers;
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
      result.accept(providers);
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
      result.accept(providers);
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
      BurstCpu cpu = new BurstCpu(wall, ProcStats.cpuSeconds(etcdPid) - etcd0,
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

  /**
   * A burst of registrations: when all were visible and registered, the JVMs that made them (closed here), and the
   * cache that saw them (closed with its registry).
   */
  private record Burst(double allVisibleMs, double registeredMs, List<ChildProcess> jvms, EndpointCache cache)
      implements AutoCloseable {
    @Override
    public void close() {
      jvms.forEach(ChildProcess::close);
    }
  }
}
