package dev.muster.bench.scale;

import static dev.muster.bench.scale.ScaleBench.READY_LIMIT;
import static dev.muster.bench.scale.ScaleBench.SEEN_LIMIT;
import static dev.muster.bench.scale.ScaleBench.SERVICE;
import static dev.muster.bench.scale.ScaleBench.WARMUP;
import static dev.muster.bench.scale.ScaleBench.alive;

import dev.muster.bench.curator.CuratorSessions;
import dev.muster.bench.curator.CuratorSide;
import dev.muster.bench.curator.ZooKeeperServer;
import dev.muster.bench.scale.ScaleBench.CuratorProviders;
import dev.muster.bench.scale.ScaleBench.Plan;
import dev.muster.bench.scale.ScaleBench.Visibility;
import dev.muster.bench.support.BenchException;
import dev.muster.bench.support.Jvms;
import dev.muster.bench.support.ProcStats;
import dev.muster.bench.support.Samples;
import dev.muster.bench.support.Wait;
import dev.muster.testing.ChildProcess;
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
 * The scale section's Curator side ({@link ScaleBench.Step#curator}) on a private ZooKeeper: as many {@code
 * ServiceCache}s as Muster's caches in as many JVMs, register → visible in all; and as many provider sessions
 * registering at once, with ZooKeeper's load. Runs on the calling thread; every JVM it starts is closed by the time
 * it returns.
 */
final class CuratorScale {
  private final Plan plan;
  private final Path dir;
  private final PrintStream progress;
  private final List<String> notes;

  CuratorScale(Plan plan, Path dir, PrintStream progress, List<String> notes) {
    this.plan = plan;
    this.dir = dir;
    this.progress = progress;
    this.notes = notes;
  }

  /** Curator's ServiceCaches, as many as Muster's, in as many JVMs: until a registration is in all of them. */
  Visibility watchers(ZooKeeperServer zk) {
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
      Visibility v = new Visibility("Curator on ZooKeeper", fleet.caches(), plan.jvms(), visible, call,
          (ProcStats.cpuSeconds(zk.pid()) - cpu0) / wall, ProcStats.rssBytes(zk.pid()).orElse(-1), Double.NaN, -1,
          fleet.heapPerCache(), fleet.readyMillis(), fleet.threads());
      progress.printf(Locale.ROOT, "scale: Curator, visible in all %,d: p50 %.1f ms, p99 %.1f ms%n",
          fleet.caches(), visible.p50(), visible.p99());
      return v;
    }
  }

  /** Curator's providers: one session each, as many as Muster's registrations, registering at once. */
  /** Hands its figures to {@code result} before the JVMs are closed (a failure closing them keeps the figures). */
  void sessions(ZooKeeperServer zk, Consumer<CuratorProviders> result) {
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
      BurstCpu cpu = new BurstCpu((System.nanoTime() - burst0) / 1e9, ProcStats.cpuSeconds(zk.pid()) - zk0,
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
      result.accept(new CuratorProviders(total, plan.jvms(), allVisible, registered, (p1 - p0) / wall,
          (ProcStats.cpuSeconds(zk.pid()) - cpu0) / wall, ProcStats.rssBytes(zk.pid()).orElse(-1)));
    } catch (IOException e) {
      throw new BenchException("cannot create " + go + ": " + e.getMessage());
    } finally {
      jvms.forEach(ChildProcess::close);
    }
  }
}
