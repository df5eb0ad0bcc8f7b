package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.registry.InstanceState;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling restart of the Spring example under load, as real processes on a real etcd: three {@code orders}
 * instances, {@code shop} calling them every 20 ms, and each {@code orders} in turn SIGTERMed (the starter's drain,
 * then Tomcat's graceful shutdown), waited for until it exits, and replaced by a new process with the same id,
 * waited for until it is registered and UP. No call of {@code shop}'s fails, and every replacement serves calls.
 * The applications run with the examples' own configuration; only etcd, the namespace, the ids and shop's port are
 * given. Every process is stopped by pid.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class SpringRollingRestartIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private SpringApps apps;
  private Load load;

  @AfterEach
  void stop() {
    if (load != null) {
      load.stop();
    }
    if (apps != null) {
      apps.close();
    }
  }

  /** One call of shop's: when it ended, and the instance that served it or why it failed. */
  private record Call(long endNanos, String servedBy, String failure) {}

  /** Calls shop's {@code /buy} one after another, 20 ms apart, on a thread of its own, until stopped. */
  private static final class Load implements Runnable {
    private final SpringApps apps;
    private final int port;
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private final Thread thread = new Thread(this, "shop-load");
    private volatile boolean stopped;

    Load(SpringApps apps, int port) {
      this.apps = apps;
      this.port = port;
    }

    @Override
    public void run() {
      for (int i = 0; !stopped; i++) {
        String servedBy = null;
        String failure = null;
        try {
          servedBy = apps.get(port, "/buy/" + i).path("served_by").asText("?");
        } catch (IOException e) {
          failure = e.toString();
        } catch (InterruptedException e) {
          return;
        }
        calls.add(new Call(System.nanoTime(), servedBy, failure));
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    void start() {
      thread.start();
    }

    void stop() {
      stopped = true;
      try {
        thread.join(Duration.ofSeconds(15).toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    List<Call> calls() {
      return List.copyOf(calls);
    }

    boolean servedAfter(String id, long nanos) {
      return calls.stream().anyMatch(c -> c.endNanos() > nanos && id.equals(c.servedBy()));
    }
  }

  /** The calls served by each instance, with {@code "failed"} for the failures. */
  private static Map<String, Integer> spread(List<Call> calls) {
    Map<String, Integer> spread = new TreeMap<>();
    calls.forEach(c -> spread.merge(c.failure() == null ? c.servedBy() : "failed", 1, Integer::sum));
    return spread;
  }

  @Test
  void restartingEveryOrdersInstanceOneAtATimeUnderLoadFailsNoCall() throws Exception {
    apps = new SpringApps(etcd.endpointsString(), "rolling" + Long.toHexString(System.nanoTime() & 0xffffff));
    Map<String, ChildProcess> running = new LinkedHashMap<>();
    for (String id : List.of("o1", "o2", "o3")) {
      running.put(id, apps.orders(id));
    }
    int shopPort = LoopbackPorts.pick();
    ChildProcess shop = apps.app("shop", "shop.jar", "--server.port=" + shopPort, "--muster.instance.id=shop1");
    await("shop answers").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      assertThat(shop.isAlive()).as("shop: %s", shop.stderrTail()).isTrue();
      try {
        return apps.get(shopPort, "/buy/0").has("served_by");
      } catch (IOException e) {
        return false;
      }
    });
    await("shop's balancer holds the three").atMost(Duration.ofSeconds(20)).until(() -> apps.get(shopPort,
        "/actuator/muster").path("caches").path("orders").path("instances").findValuesAsText("id").size() == 3);

    load = new Load(apps, shopPort);
    load.start();
    long loadStart = System.nanoTime();
    await("calls before the restart").atMost(Duration.ofSeconds(30)).until(() -> load.calls().size() >= 100);
    List<String> steps = new ArrayList<>();
    Map<String, Long> replacedAt = new LinkedHashMap<>(); // id -> when its old process had exited
    for (String id : List.of("o1", "o2", "o3")) {
      ChildProcess old = running.get(id);
      long t0 = System.nanoTime();
      old.terminate();
      int exit = old.exitCode(Duration.ofSeconds(60));
      long exited = System.nanoTime();
      assertThat(exit).as("%s's exit: %s", id, old.stderrTail()).isIn(0, 143);
      assertThat(apps.registered(id)).as("%s's key once it exited", id).isEmpty();
      replacedAt.put(id, exited);
      ChildProcess fresh = apps.orders(id);
      running.put(id, fresh);
      await(id + "'s replacement UP").atMost(Duration.ofSeconds(30))
          .ignoreException(dev.muster.RegistryUnavailableException.class).until(() -> apps.registered(id)
          .map(i -> i.state() == InstanceState.UP).orElse(false));
      long up = System.nanoTime();
      await(id + "'s replacement serves").atMost(Duration.ofSeconds(30)).until(() -> load.servedAfter(id, exited));
      steps.add(String.format("%s: SIGTERM to exit %d ms (exit code %d), exit to registered and UP %d ms, to its"
          + " first call served %d ms", id, (exited - t0) / 1_000_000, exit, (up - exited) / 1_000_000,
          (load.calls().stream().filter(c -> c.endNanos() > exited && id.equals(c.servedBy())).findFirst()
              .orElseThrow().endNanos() - exited) / 1_000_000));
    }
    long lastUp = System.nanoTime();
    // Some seconds more: a replacement's first answers come from a cold JVM, and power of two choices weighs
    // latency (an EWMA over 10 s), so the last one gets few calls at first.
    await("calls after the restart").atMost(Duration.ofSeconds(60)).until(() -> load.calls().stream()
        .filter(c -> c.endNanos() > lastUp).count() >= 300);
    load.stop();

    List<Call> calls = load.calls();
    List<String> failures = calls.stream().filter(c -> c.failure() != null).map(Call::failure).toList();
    JsonNode budget = apps.get(shopPort, "/actuator/muster").path("caches").path("orders");
    System.out.println("[spring rolling restart IT] " + String.join("; ", steps));
    System.out.printf("[spring rolling restart IT] %d calls over %d s, %d failed; spread %s%n", calls.size(),
        (System.nanoTime() - loadStart) / 1_000_000_000, failures.size(), spread(calls));
    for (Map.Entry<String, Long> r : replacedAt.entrySet()) {
      List<Call> after = calls.stream().filter(c -> c.endNanos() > r.getValue()).toList();
      System.out.printf("[spring rolling restart IT] after %s's old process exited: %s%n", r.getKey(),
          spread(after));
    }
    System.out.printf("[spring rolling restart IT] after the last replacement was UP: %s%n",
        spread(calls.stream().filter(c -> c.endNanos() > lastUp).toList()));
    System.out.println("[spring rolling restart IT] shop's retry budget for orders: " + budget.path("retryBudget")
        + ", failures: " + failures);
    assertThat(failures).as("calls across the rolling restart").isEmpty();
    for (Map.Entry<String, Long> r : replacedAt.entrySet()) {
      assertThat(load.servedAfter(r.getKey(), r.getValue())).as("%s's replacement served calls", r.getKey())
          .isTrue();
    }
  }
}
