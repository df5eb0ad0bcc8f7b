package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.JsonLog;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * While the registry is down, a consumer that keeps its last known set (Muster's stale-while-error, consumer K)
 * goes on calling the healthy providers, and one that clears its set on error (consumer X, the hidden
 * {@code muster call --clear-on-stale} negative control) fails every call although only etcd is down.
 *
 * <p>How: 3 providers; K (A-style: ejection + retry) and X (the same plus {@code --clear-on-stale}) each call every
 * 25 ms (40/s). etcd is SIGKILLed, left down 5 s and restarted on its data. From the callers' logs: ok and failed
 * calls per second for each full second between the kill and etcd answering again (the median, and the totals);
 * X's {@code cleared} and {@code restored} lines say when it dropped its set and took it back.
 */
public final class RegistryDownKeepVsClear implements Scenario {
  private static final Duration INTERVAL = Duration.ofMillis(25);
  private static final Duration DOWN = Duration.ofSeconds(5);

  @Override
  public String name() {
    return "registry_down_keep_vs_clear";
  }

  @Override
  public String shows() {
    return "etcd SIGKILL for 5 s: keep-last-known (K) vs clear-on-error (X, negative control), calls per second";
  }

  @Override
  public String seed() {
    return "keep-last-known 40/0 per s vs clear-on-error 0/40 per s";
  }

  @Override
  public ScenarioResult run(LabContext ctx) {
    EtcdCluster etcd = ctx.etcd(1);
    String endpoints = etcd.endpointsString();
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 3);
    Duration timeout = ctx.params().attemptTimeout();
    ChildProcess k = Callers.start(ctx, "consumer-k", f.service, endpoints, true, INTERVAL, timeout);
    ChildProcess x = Callers.start(ctx, "consumer-x", f.service, endpoints, true, INTERVAL, timeout,
        "--clear-on-stale");
    f.awaitWarm(ctx, k, x);

    Instant kill = Instant.now();
    etcd.member(0).kill();
    ctx.sleep(DOWN);
    etcd.member(0).restart();
    Instant answering = Instant.now();
    ctx.await("X takes its set back", Duration.ofSeconds(30),
        () -> Callers.firstAt(x, "restored", kill).isPresent()); // may come before restart() returns
    ctx.await("X calls ok again (20 in a row)", Duration.ofSeconds(30), () -> Callers.lastOk(x, 20));
    ctx.sleep(Duration.ofMillis(500)); // calls started before `answering` finish

    int seconds = (int) Duration.between(kill, answering).toSeconds();
    PerSecond kRate = PerSecond.of(k, kill, seconds);
    PerSecond xRate = PerSecond.of(x, kill, seconds);
    List<JsonNode> kDown = Fleet.calls(k, kill, answering);
    List<JsonNode> xDown = Fleet.calls(x, kill, answering);
    long kFailed = Fleet.failed(kDown);
    long xFailed = Fleet.failed(xDown);
    Instant cleared = Callers.firstAt(x, "cleared", kill).orElse(null);
    Instant restored = Callers.firstAt(x, "restored", kill).orElseThrow();
    Instant xOkAgain = x.json().events("call").stream()
        .filter(n -> n.path("ok").asBoolean() && !JsonLog.ts(n).isBefore(restored))
        .map(JsonLog::ts).findFirst().orElseThrow();
    ctx.note(String.format("K ok per second %s, failed %s", kRate.ok, kRate.failed));
    ctx.note(String.format("X ok per second %s, failed %s", xRate.ok, xRate.failed));

    boolean pass = kFailed == 0 && !kDown.isEmpty() && xFailed > 0;
    return ScenarioResult.of(this, pass, String.format("etcd down %.1f s; median of its %d full seconds K %s per s,"
            + " X %s per s (ok/failed); whole outage K %d of %d calls failed, X %d of %d; X cleared its set %s after"
            + " the kill, took it back %d ms after etcd answered and called ok again %d ms after that",
        Fleet.millis(kill, answering) / 1000.0, seconds, kRate.median(), xRate.median(), kFailed, kDown.size(),
        xFailed, xDown.size(), cleared == null ? "never" : Fleet.millis(kill, cleared) + " ms",
        Fleet.millis(answering, restored), Fleet.millis(restored, xOkAgain)),
        "K (keep last known) failures = 0 while etcd is down; X (clear on error) fails (the negative control) and"
            + " calls ok again after recovery");
  }

  /** Calls that started in each full second after {@code from}: ok and failed counts. */
  private record PerSecond(List<Long> ok, List<Long> failed) {
    static PerSecond of(ChildProcess caller, Instant from, int seconds) {
      List<Long> ok = new ArrayList<>();
      List<Long> failed = new ArrayList<>();
      for (int i = 0; i < seconds; i++) {
        List<JsonNode> calls = Fleet.calls(caller, from.plusSeconds(i), from.plusSeconds(i + 1));
        long f = Fleet.failed(calls);
        ok.add(calls.size() - f);
        failed.add(f);
      }
      return new PerSecond(ok, failed);
    }

    /** Medians, not means: after a stall on a loaded machine the fixed-rate ticker catches up in a burst. */
    String median() {
      return median(ok) + "/" + median(failed);
    }

    private static String median(List<Long> xs) {
      if (xs.isEmpty()) {
        return "-";
      }
      List<Long> sorted = xs.stream().sorted().toList();
      int m = sorted.size() / 2;
      double v = sorted.size() % 2 == 1 ? sorted.get(m) : (sorted.get(m - 1) + sorted.get(m)) / 2.0;
      return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
  }
}
