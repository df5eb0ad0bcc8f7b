package dev.muster.lab.sim;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.LabContext;
import dev.muster.lab.LabException;
import dev.muster.lab.LabParams;
import dev.muster.lab.sim.ValidationConfig.PlannedPause;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import dev.muster.testing.LeaseRemainder;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@code muster sim ttl --validate}: Muster's model against real processes. A private one-member etcd, N
 * {@code muster register} processes (TTL and keepalive from the {@link ValidationConfig}, every renewal logged);
 * each provider, on its own thread, takes its planned pauses one after another: SIGSTOP {@code phase} after a
 * renewal, SIGCONT {@code pause} later, then a settling time in which a lost lease must show as {@code lease_lost}.
 * The verdicts are read from the providers' logs once every pause is over.
 *
 * <p>The stop is aimed at {@code last keepalive + phase}, moved whole keepalive periods ahead when that moment has
 * passed, from one read of the log (no polling while aiming: the renewals keep their period, and the measured phase,
 * from the log afterwards, is reported beside the sampled one). Every process is stopped by pid when the run ends,
 * also when it fails ({@link LabContext#close()}), and a provider is always resumed before its thread leaves a pause.
 *
 * <p>Not thread-safe; {@link #run} blocks for the whole run (about a minute for 20 × 2 pauses at TTL 3 s). The pool
 * threads use only the context's stateless {@code await} and {@code sleep} and their own provider's signals; the
 * caller's thread starts, marks and closes.
 */
public final class TtlValidation {
  /** A pause this close to its boundary is not held to the prediction (docs/sim-ttl.md says why). */
  public static final Duration TOLERANCE = Duration.ofMillis(600);
  static final String SERVICE = "sim-ttl";
  private static final Set<String> RENEWALS = Set.of("registered", "reregistered", "keepalive");
  /** A stop planned closer than this to now moves to the next keepalive period. */
  private static final Duration LEAD = Duration.ofMillis(50);
  private static final Duration START_LIMIT = Duration.ofSeconds(90);
  private static final int FIRST_PORT = 20_000;

  private TtlValidation() {}

  /**
   * Runs the validation with the providers' logs in {@code dir} (emptied first), starting processes with
   * {@code musterCommand} ({@code [java, -jar, muster.jar]}), and a line of progress on {@code progress} per stage.
   */
  public static ValidationReport run(ValidationConfig config, Path dir, List<String> musterCommand,
      PrintWriter progress) {
    List<PlannedPause> plan = config.plan();
    LabParams lab = LabParams.seed();
    LabParams params = new LabParams(config.ttl(), config.keepalive(), lab.callInterval(), lab.attemptTimeout(),
        lab.ejectionTime(), lab.maxRetries());
    long t0 = System.nanoTime();
    try (LabContext ctx = new LabContext(params, dir, musterCommand, new PrintStream(OutputStream.nullOutputStream()))) {
      EtcdCluster etcd = ctx.etcd(1);
      Map<String, ChildProcess> providers = startProviders(ctx, config, etcd.endpointsString());
      Duration startup = Duration.ofNanos(System.nanoTime() - t0);
      progress.printf("%d providers registered in %.1f s; pausing them (logs in %s)%n", providers.size(),
          startup.toMillis() / 1000.0, dir.toAbsolutePath());
      progress.flush();
      long t1 = System.nanoTime();
      List<Inflicted> inflicted = inflictAll(ctx, config, plan, providers);
      Duration pausing = Duration.ofNanos(System.nanoTime() - t1);
      List<PauseTrial> trials = new ArrayList<>();
      for (Inflicted i : inflicted) {
        ctx.mark("pause", i.planned().provider() + " round " + i.planned().round() + ": SIGSTOP " + i.stopped()
            + ", SIGCONT " + i.resumed());
        trials.add(verdict(config, i, providers.get(i.planned().provider()).json()));
      }
      return new ValidationReport(config, trials, startup, pausing);
    }
  }

  private static Map<String, ChildProcess> startProviders(LabContext ctx, ValidationConfig config, String endpoints) {
    Map<String, ChildProcess> providers = new LinkedHashMap<>();
    // All at once, each with a start timeout long enough for 20 cold JVMs sharing two cores with etcd.
    for (int i = 1; i <= config.providers(); i++) {
      String id = "p" + i;
      // The address is only a record here: nothing serves it and nothing calls it.
      providers.put(id, ctx.start(id, "register", "--service", SERVICE, "--id", id, "--address",
          "127.0.0.1:" + (FIRST_PORT + i), "--ttl", Sims.format(config.ttl()), "--keepalive",
          Sims.format(config.keepalive()), "--start-timeout", Sims.format(START_LIMIT), "--log-keepalives",
          "--endpoints", endpoints));
    }
    for (ChildProcess p : providers.values()) {
      ctx.await(p.name() + " registered", START_LIMIT, () -> p.json().has("registered") || !p.isAlive());
      if (!p.isAlive()) {
        throw new LabException(p.name() + " exited before it registered: " + p.stderrTail());
      }
    }
    return providers;
  }

  /** Every provider's pauses, providers side by side; returns when all are over and settled. */
  private static List<Inflicted> inflictAll(LabContext ctx, ValidationConfig config, List<PlannedPause> plan,
      Map<String, ChildProcess> providers) {
    ExecutorService pool = Executors.newFixedThreadPool(providers.size(), r -> {
      Thread t = new Thread(r, "sim-ttl-pauses");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<List<Inflicted>>> futures = new ArrayList<>();
      for (ChildProcess p : providers.values()) {
        List<PlannedPause> own = plan.stream().filter(x -> x.provider().equals(p.name())).toList();
        futures.add(pool.submit(() -> inflict(ctx, config, p, own)));
      }
      Duration perRound = config.keepalive().multipliedBy(2).plus(config.pauseCap()).plus(settle(config));
      long deadline = System.nanoTime() + perRound.multipliedBy(config.rounds()).plusSeconds(60).toNanos();
      List<Inflicted> all = new ArrayList<>();
      for (Future<List<Inflicted>> f : futures) {
        all.addAll(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      }
      return all;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LabException("interrupted while pausing the providers");
    } catch (ExecutionException e) {
      throw new LabException("a provider's pauses failed: " + e.getCause());
    } catch (TimeoutException e) {
      throw new LabException("the pauses did not end in time");
    } finally {
      pool.shutdownNow();
    }
  }

  /** One provider's pauses, in order, on a pool thread. */
  private static List<Inflicted> inflict(LabContext ctx, ValidationConfig config, ChildProcess p,
      List<PlannedPause> pauses) {
    List<Inflicted> out = new ArrayList<>();
    for (PlannedPause planned : pauses) {
      Instant renewal = lastKeepalive(ctx, config, p);
      Instant stopAt = renewal.plus(planned.phase());
      while (stopAt.isBefore(Instant.now().plus(LEAD))) {
        stopAt = stopAt.plus(config.keepalive());
      }
      sleepUntil(ctx, stopAt);
      p.pause();
      Instant stopped = Instant.now();
      Instant resumed;
      try {
        sleepUntil(ctx, stopped.plus(planned.pause()));
      } finally {
        p.resume();
        resumed = Instant.now();
      }
      out.add(new Inflicted(planned, stopped, resumed, resumed.plus(settle(config))));
      sleepUntil(ctx, resumed.plus(settle(config)));
    }
    return out;
  }

  /**
   * After a resume, the overdue keepalive goes at once (or at its time); etcd answers a renewal of an expired lease
   * only once its expiry scan (500 ms) has revoked it, and a keepalive that times out (after the keepalive
   * interval) is retried: two periods and 1.5 s hold all of that.
   */
  private static Duration settle(ValidationConfig config) {
    return config.keepalive().multipliedBy(2).plusMillis(1500);
  }

  /**
   * The provider's latest keepalive, waiting for one in the last two periods if there is none. Only a keepalive is
   * on the schedule: a {@code registered} or {@code reregistered} line is logged after the put, which on a cold JVM
   * comes hundreds of ms after the grant that the lease (and the first keepalive) counts from.
   */
  private static Instant lastKeepalive(LabContext ctx, ValidationConfig config, ChildProcess p) {
    Instant[] found = new Instant[1];
    ctx.await(p.name() + " renewing", config.ttl().plusSeconds(10), () -> {
      Instant since = Instant.now().minus(config.keepalive().multipliedBy(2));
      found[0] = p.json().events("keepalive").stream().map(JsonLog::ts).filter(ts -> ts.isAfter(since))
          .reduce((a, b) -> b).orElse(null);
      return found[0] != null;
    });
    return found[0];
  }

  private static PauseTrial verdict(ValidationConfig config, Inflicted i, JsonLog log) {
    Duration remaining = LeaseRemainder.at(log, i.stopped(), config.ttl()).orElseThrow(() -> new LabException(
        i.planned().provider() + " logged no renewal before its pause at " + i.stopped()));
    boolean lost = log.events("lease_lost").stream().map(JsonLog::ts)
        .anyMatch(ts -> ts.isAfter(i.stopped()) && !ts.isAfter(i.settled()));
    Optional<JsonNode> renewedAfter = log.lines().stream().filter(n -> RENEWALS.contains(n.path("event").asText()))
        .filter(n -> JsonLog.ts(n).isAfter(i.resumed())).findFirst();
    if (renewedAfter.isEmpty()) {
      throw new LabException(i.planned().provider() + " never renewed after its SIGCONT at " + i.resumed());
    }
    return new PauseTrial(i.planned(), config.ttl().minus(i.planned().phase()), i.stopped(), i.resumed(), remaining,
        lost);
  }

  private static void sleepUntil(LabContext ctx, Instant t) {
    Duration d = Duration.between(Instant.now(), t);
    if (!d.isNegative() && !d.isZero()) {
      ctx.sleep(d);
    }
  }

  /** A pause as it happened: the signals' times, and until when its outcome may show. */
  private record Inflicted(PlannedPause planned, Instant stopped, Instant resumed, Instant settled) {}
}
