package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The two Spring Boot examples as real processes on a real etcd: {@code orders} instances register themselves
 * with the ports Tomcat bound, {@code shop} calls them through a {@code @LoadBalanced} {@code RestClient} on
 * Muster's load balancer. One {@code orders} SIGKILLed, one SIGTERMed (graceful) and a new one started cost
 * {@code shop} no call; with etcd SIGKILLed for 10 s {@code shop} keeps calling on the last known set and its
 * health shows the cache stale, then fresh again. Every process is stopped by pid.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class SpringFleetIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final String namespace = "spring" + Long.toHexString(System.nanoTime() & 0xffffff);
  private SpringApps apps;
  private EtcdRegistry registry;
  private int shopPort;

  @AfterEach
  void stop() {
    if (apps != null) {
      apps.close();
    }
  }

  private ChildProcess app(String name, String jarProperty, String... args) {
    return apps.app(name, jarProperty, args);
  }

  /** Starts {@code orders} as {@code id} and waits until it is registered; returns its registered record. */
  private Instance orders(String id) {
    apps.orders(id, "--muster.instance.ttl=3s", "--muster.instance.keepalive=1s", "--muster.instance.drain=1s");
    return registered(id).orElseThrow();
  }

  private Optional<Instance> registered(String id) {
    return apps.registered(id);
  }

  /** {@code muster ls orders --json}: one JSON object per instance. */
  private List<JsonNode> musterLs() throws IOException, InterruptedException {
    try (ChildProcess ls = ChildProcess.start("muster-ls", ChildProcess.javaCommand(List.of(), List.of("-jar",
        System.getProperty("muster.jar"), "ls", "orders", "--json", "--namespace", namespace, "--endpoints",
        etcd.endpointsString())))) {
      assertThat(ls.exitCode(Duration.ofSeconds(60))).as("muster ls: %s", ls.stderrTail()).isZero();
      List<JsonNode> instances = new ArrayList<>();
      for (String line : ls.stdout()) {
        JsonNode n = SpringApps.JSON.readTree(line);
        if (n.has("id")) {
          instances.add(n);
        }
      }
      return instances;
    }
  }

  /** The value of the sample of {@code name} whose labels hold every one of {@code labels}, from /actuator/prometheus. */
  private static double metric(int port, String name, String... labels) throws IOException, InterruptedException {
    java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
        .newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
        .timeout(Duration.ofSeconds(10)).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as("/actuator/prometheus on %d", port).isEqualTo(200);
    for (String line : r.body().split("\n")) {
      if (line.startsWith(name + "{") && java.util.Arrays.stream(labels).allMatch(line::contains)) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no " + name + " " + java.util.Arrays.toString(labels) + " in the scrape of " + port);
  }

  private JsonNode get(int port, String path) throws IOException, InterruptedException {
    return apps.get(port, path);
  }

  /** What {@code n} calls of shop's {@code /buy} every 20 ms got: served_by counts and failures, while {@code during} runs half-way. */
  private Map<String, Integer> calls(int n, List<String> failures, Runnable during) throws InterruptedException {
    Map<String, Integer> servedBy = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      if (i == n / 2 && during != null) {
        during.run();
      }
      try {
        servedBy.merge(get(shopPort, "/buy/" + i).path("served_by").asText("?"), 1, Integer::sum);
      } catch (IOException e) {
        failures.add(e.getMessage());
      }
      Thread.sleep(20);
    }
    return servedBy;
  }

  @Test
  void shopCallsOrdersThroughKillsRollingRestartsNewInstancesAndAnEtcdOutage() throws Exception {
    apps = new SpringApps(etcd.endpointsString(), namespace);
    registry = apps.registry();
    Instance o1 = orders("o1");
    Instance o2 = orders("o2");
    // Registered with the port Tomcat bound (server.port=0) and the configured metadata; that port answers as o1.
    assertThat(o1.port()).isPositive().isNotEqualTo(o2.port());
    assertThat(o1.metadata()).containsEntry("team", "fulfilment");
    assertThat(o1.address()).isEqualTo("127.0.0.1");
    assertThat(get(o1.port(), "/orders/7").path("served_by").asText()).isEqualTo("o1");
    // ... and muster ls, the command line's view, shows both with those ports and metadata.
    List<JsonNode> ls = musterLs();
    assertThat(ls).extracting(n -> n.path("id").asText()).containsExactlyInAnyOrder("o1", "o2");
    assertThat(ls).extracting(n -> n.path("port").asInt()).containsExactlyInAnyOrder(o1.port(), o2.port());
    assertThat(ls).allSatisfy(n -> assertThat(n.path("metadata").path("team").asText()).isEqualTo("fulfilment"));

    shopPort = LoopbackPorts.pick();
    ChildProcess shop = app("shop", "shop.jar", "--server.port=" + shopPort, "--muster.instance.id=shop1");
    await("shop answers").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> {
      assertThat(shop.isAlive()).as("shop: %s", shop.stderrTail()).isTrue();
      try {
        return get(shopPort, "/buy/1").has("served_by");
      } catch (IOException e) {
        return false;
      }
    });

    List<String> failures = new ArrayList<>();
    Map<String, Integer> spread = calls(60, failures, null);
    System.out.println("[spring fleet IT] spread: " + spread);
    assertThat(failures).isEmpty();
    // Power of two choices over two endpoints compares both on every pick and takes the lower (in flight + 1) ×
    // latency EWMA: sequential calls may all go to one of them for a while (a fresh-clone run had {o1=60}: o2's
    // first answer, from a cold JVM, was slower, and that sample decays over the EWMA's 10 s). So the spread is
    // printed, not asserted; what must hold is that each call was served by o1 or o2 and the shop's balancer
    // holds both, neither ejected. That o2 serves is shown below, when o1 is killed.
    assertThat(spread.keySet()).isSubsetOf("o1", "o2");
    JsonNode held = get(shopPort, "/actuator/muster").path("caches").path("orders").path("instances");
    System.out.println("[spring fleet IT] the shop's balancer: " + held);
    assertThat(held.findValuesAsText("id")).containsExactlyInAnyOrder("o1", "o2");
    assertThat(held.findValues("ejected")).allSatisfy(e -> assertThat(e.asBoolean()).isFalse());

    // Discovery's own meters, as Prometheus scrapes them: the shop's cache and balancer of orders, o1's registration.
    assertThat(metric(shopPort, "muster_cache_endpoints", "service=\"orders\"")).isEqualTo(2.0);
    assertThat(metric(shopPort, "muster_balancer_endpoints", "service=\"orders\"", "state=\"available\""))
        .isEqualTo(2.0);
    assertThat(metric(shopPort, "muster_cache_stale", "service=\"orders\"")).isZero();
    assertThat(metric(o1.port(), "muster_registration_state", "instance=\"o1\"", "state=\"active\""))
        .isEqualTo(1.0);
    assertThat(metric(o1.port(), "muster_registration_keepalive_seconds_count", "instance=\"o1\"")).isPositive();

    ChildProcess p1 = apps.started().get(0);
    Map<String, Integer> killed = calls(100, failures, p1::kill);
    System.out.println("[spring fleet IT] o1 SIGKILLed half-way: " + killed + ", failed " + failures);
    assertThat(failures).as("idempotent GETs across a SIGKILL").isEmpty();

    Instance o3 = orders("o3");
    long ready = System.nanoTime();
    await("o3 gets calls").atMost(Duration.ofSeconds(20)).until(() -> "o3".equals(get(shopPort, "/buy/2")
        .path("served_by").asText()));
    System.out.printf("[spring fleet IT] o3 (port %d) served a call %d ms after it was registered%n", o3.port(),
        (System.nanoTime() - ready) / 1_000_000);

    ChildProcess p2 = apps.started().get(1);
    List<String> o2States = new CopyOnWriteArrayList<>(); // o2's state at etcd, change by change; "gone" at the end
    try (EndpointCache watch = registry.watch(CacheConfig.builder("orders").namespace(namespace).build(),
        (set, delta) -> {
          String now = set.instances().stream().filter(i -> i.id().equals("o2")).findFirst()
              .map(i -> i.state().name()).orElse("gone");
          if (o2States.isEmpty() || !o2States.get(o2States.size() - 1).equals(now)) {
            o2States.add(now);
          }
        })) {
      await("the watch sees o2").atMost(Duration.ofSeconds(10)).until(() -> o2States.contains("UP"));
      Map<String, Integer> terminated = calls(150, failures, p2::terminate);
      System.out.println("[spring fleet IT] o2 SIGTERMed half-way: " + terminated + ", failed " + failures);
      assertThat(failures).as("calls across a graceful stop").isEmpty();
      assertThat(p2.exitCode(Duration.ofSeconds(60))).as("o2: %s", p2.stderrTail()).isIn(0, 143);
      assertThat(registered("o2")).as("o2's key after its stop").isEmpty();
      await("the watch sees o2 gone").atMost(Duration.ofSeconds(10)).until(() -> o2States.contains("gone"));
    }
    assertThat(o2States).as("o2 at etcd: DRAINING (kept for the drain), then revoked").containsExactly("UP",
        "DRAINING", "gone");
    // The drain is the registration's own (Registration.drain(), a timer): its DRAINED comes before the revoke.
    List<String> stopLines = p2.stdout().stream().filter(l -> l.contains("type=DRAINED") || l.contains("type=REVOKED"))
        .map(l -> l.contains("type=DRAINED") ? "DRAINED" : "REVOKED").toList();
    assertThat(stopLines).as("o2's log: %s", p2.stdout()).containsExactly("DRAINED", "REVOKED");

    etcd.member(0).kill();
    Map<String, Integer> outage = calls(200, failures, null); // about 10 s
    JsonNode health = get(shopPort, "/actuator/health");
    JsonNode cache = health.path("components").path("muster").path("details").path("caches").path("orders");
    System.out.println("[spring fleet IT] etcd down: " + outage + ", failed " + failures + "; health " + cache);
    assertThat(failures).as("calls with etcd down").isEmpty();
    assertThat(cache.path("stale").asBoolean()).as("shop's health during the outage: %s", health).isTrue();
    assertThat(health.path("status").asText()).isEqualTo("UP");

    etcd.member(0).restart();
    await("shop's cache fresh again").atMost(Duration.ofSeconds(60)).until(() -> !get(shopPort, "/actuator/health")
        .path("components").path("muster").path("details").path("caches").path("orders").path("stale")
        .asBoolean(true));
    assertThat(calls(20, failures, null)).containsKey("o3");
    assertThat(failures).isEmpty();
  }
}
