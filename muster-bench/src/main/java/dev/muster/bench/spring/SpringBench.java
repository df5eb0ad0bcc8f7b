package dev.muster.bench.spring;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.bench.support.Samples;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The Spring Boot starter, with the example applications ({@code examples/spring-orders}, {@code spring-shop}) as
 * processes on one private etcd member, in two parts:
 *
 * <ol>
 *   <li><b>The starter's cost:</b> the same {@code orders} jar started with Muster on and with it off
 *       ({@code --muster.enabled=false}: the starter's auto-configurations back off, jetcd is never loaded), in
 *       turns. Startup = process start to the first 200 from {@code GET /orders/1} (serving), then from
 *       {@code /actuator/health} (which asks the discovery client, so etcd); heap = used heap after a
 *       full GC ({@code jcmd PID GC.run}, then {@code jvm.memory.used} for {@code area:heap}). Same JVM flags for
 *       both ({@code -XX:+UseSerialGC -Xmx512m}).
 *   <li><b>Muster's load balancer vs Spring Cloud's default</b> ({@code muster.loadbalancer.enabled=false}: round
 *       robin over the {@code DiscoveryClient}'s list, cached 35 s), the same apps and faults, retries off in both
 *       so every call that reaches a dead instance shows: {@code shop} is called every 50 ms; one {@code orders}
 *       is SIGKILLed (TTL 3 s) and the calls are watched for 40 s: failures, and the last failure after the kill;
 *       then a new {@code orders} registers and the time until it serves a call is taken (at most 40 s).
 * </ol>
 */
public final class SpringBench {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> JVM = List.of("-XX:+UseSerialGC", "-Xmx512m");

  /** One figure per row, for the report. */
  public record Row(String metric, String muster, String other) {}

  public record Result(List<Row> cost, List<Row> control, List<String> failures) {
    public void print(PrintStream out) {
      out.println();
      out.println("6. Spring Boot: the starter's cost (orders, Muster on vs off) and its load balancer vs Spring"
          + " Cloud's default (shop -> orders)");
      table(out, "the starter's cost", "muster on", "muster off", cost);
      table(out, "after a kill -9 / a new instance", "muster", "spring default", control);
      failures.forEach(f -> out.println("  failed: " + f));
    }

    private static void table(PrintStream out, String title, String a, String b, List<Row> rows) {
      out.printf("%-58s %18s %18s%n", title, a, b);
      rows.forEach(r -> out.printf("%-58s %18s %18s%n", r.metric(), r.muster(), r.other()));
    }
  }

  private final Path logs;
  private final PrintStream progress;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final List<String> failures = new ArrayList<>();

  private SpringBench(Path logs, PrintStream progress) {
    this.logs = logs;
    this.progress = progress;
  }

  /** {@code samples} starts per variant for the cost part. */
  public static Result run(Path repo, int samples, Path logs, PrintStream progress) {
    SpringBench b = new SpringBench(logs, progress);
    Path orders = repo.resolve("examples/spring-orders/target/muster-example-spring-orders-exec.jar");
    Path shop = repo.resolve("examples/spring-shop/target/muster-example-spring-shop-exec.jar");
    if (!Files.isReadable(orders) || !Files.isReadable(shop)) {
      return new Result(List.of(), List.of(), List.of("spring: " + orders + " or " + shop + " is missing: build"
          + " with mvn -DskipTests package first"));
    }
    try (EtcdCluster etcd = EtcdCluster.builder().members(1).build()) {
      etcd.start();
      List<Row> cost = b.cost(etcd, orders, samples);
      List<Row> control = b.control(etcd, orders, shop);
      return new Result(cost, control, b.failures);
    } catch (RuntimeException e) {
      b.failures.add("spring: " + e.getMessage());
      return new Result(List.of(), List.of(), b.failures);
    }
  }

  private ChildProcess start(String name, Path jar, String... args) {
    List<String> rest = new ArrayList<>(List.of("-jar", jar.toString(), "--spring.main.banner-mode=off",
        "--management.endpoints.web.exposure.include=health,muster,metrics"));
    rest.addAll(List.of(args));
    return ChildProcess.start(name, ChildProcess.javaCommand(JVM, rest), logs.resolve(name + ".out"),
        logs.resolve(name + ".err"));
  }

  // ---- 1. cost ----------------------------------------------------------------------------------------------

  private List<Row> cost(EtcdCluster etcd, Path orders, int samples) {
    Samples[] startup = {new Samples(), new Samples()};
    Samples[] firstOrder = {new Samples(), new Samples()};
    Samples registered = new Samples();
    Samples[] heap = {new Samples(), new Samples()};
    for (int i = 0; i < samples * 2; i++) {
      int v = i % 2; // 0 = on, 1 = off
      int port = LoopbackPorts.pick();
      progress.printf("spring: cost sample %d of %d (muster %s)%n", i / 2 + 1, samples, v == 0 ? "on" : "off");
      long t0 = System.nanoTime();
      try (ChildProcess p = start("cost-" + i, orders, "--server.port=" + port,
          "--muster.endpoints=" + etcd.endpointsString(), "--muster.namespace=bench" + i,
          "--muster.enabled=" + (v == 0))) {
        awaitStatus200(p, port, "/orders/1", Duration.ofSeconds(120));
        firstOrder[v].addNanos(System.nanoTime() - t0);
        awaitHealthy(p, port, Duration.ofSeconds(120));
        startup[v].addNanos(System.nanoTime() - t0);
        if (v == 0) {
          awaitRegistered(etcd, "bench" + i, Duration.ofSeconds(30));
          registered.addNanos(System.nanoTime() - t0);
        }
        heap[v].add(heapAfterGc(p, port) / (1024.0 * 1024.0));
      } catch (IOException | RuntimeException e) {
        failures.add("spring cost sample " + i + ": " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failures.add("interrupted");
        break;
      }
    }
    return List.of(
        new Row("process start -> first GET /orders/1 200, median (ms, n=" + samples + ")", ms(firstOrder[0].p50()),
            ms(firstOrder[1].p50())),
        new Row("  min / max (ms)", ms(firstOrder[0].min()) + " / " + ms(firstOrder[0].max()),
            ms(firstOrder[1].min()) + " / " + ms(firstOrder[1].max())),
        new Row("process start -> /actuator/health 200, median (ms)", ms(startup[0].p50()), ms(startup[1].p50())),
        new Row("  min / max (ms)", ms(startup[0].min()) + " / " + ms(startup[0].max()),
            ms(startup[1].min()) + " / " + ms(startup[1].max())),
        new Row("process start -> registered in etcd, median (ms)", ms(registered.p50()), "-"),
        new Row("heap used after a full GC, median (MB)", mb(heap[0].p50()), mb(heap[1].p50())),
        new Row("  min / max (MB)", mb(heap[0].min()) + " / " + mb(heap[0].max()),
            mb(heap[1].min()) + " / " + mb(heap[1].max())));
  }

  private static String ms(double v) {
    return Double.isNaN(v) ? "-" : String.format("%.0f", v);
  }

  private static String mb(double v) {
    return Double.isNaN(v) ? "-" : String.format("%.1f", v);
  }

  private void awaitHealthy(ChildProcess p, int port, Duration limit) throws IOException, InterruptedException {
    awaitStatus200(p, port, "/actuator/health", limit);
  }

  private void awaitStatus200(ChildProcess p, int port, String path, Duration limit)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IOException(p.name() + " exited: " + p.stderrTail());
      }
      if (status(port, path) == 200) {
        return;
      }
      Thread.sleep(20);
    }
    throw new IOException(p.name() + " did not answer " + path + " with 200 within " + limit.toSeconds() + " s");
  }

  private static void awaitRegistered(EtcdCluster etcd, String namespace, Duration limit)
      throws InterruptedException, IOException {
    try (EtcdRegistry r = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      long deadline = System.nanoTime() + limit.toNanos();
      while (r.list(namespace, "orders").instances().isEmpty()) {
        if (System.nanoTime() > deadline) {
          throw new IOException("orders did not register in " + namespace);
        }
        Thread.sleep(50);
      }
    }
  }

  private double heapAfterGc(ChildProcess p, int port) throws IOException, InterruptedException {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Process gc = new ProcessBuilder(jcmd.toString(), Long.toString(p.pid()), "GC.run").redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    if (!gc.waitFor(30, TimeUnit.SECONDS) || gc.exitValue() != 0) {
      gc.destroyForcibly();
      throw new IOException("jcmd " + p.pid() + " GC.run failed");
    }
    JsonNode m = get(port, "/actuator/metrics/jvm.memory.used?tag=area:heap");
    return m.path("measurements").path(0).path("value").asDouble(Double.NaN);
  }

  // ---- 2. control ---------------------------------------------------------------------------------------------

  private List<Row> control(EtcdCluster etcd, Path orders, Path shop) {
    Figures muster = scenario(etcd, orders, shop, "muster", true);
    Figures spring = scenario(etcd, orders, shop, "spring", false);
    return List.of(
        new Row("calls failed in the 40 s after kill -9 of 1 of 2 (every 50 ms)", muster.failed(), spring.failed()),
        new Row("last failure after the kill (ms)", muster.lastFailureMs(), spring.lastFailureMs()),
        new Row("a new instance registered -> its first call (ms)", muster.newInstanceMs(), spring.newInstanceMs()));
  }

  private record Figures(String failed, String lastFailureMs, String newInstanceMs) {}

  private Figures scenario(EtcdCluster etcd, Path orders, Path shop, String label, boolean musterBalancer) {
    String namespace = "control-" + label;
    List<ChildProcess> apps = new ArrayList<>();
    try {
      String[] common = {"--muster.endpoints=" + etcd.endpointsString(), "--muster.namespace=" + namespace,
          "--muster.instance.ttl=3s", "--muster.instance.keepalive=1s", "--muster.instance.drain=0s"};
      int[] ports = new int[3];
      for (int i = 0; i < 2; i++) {
        ports[i] = LoopbackPorts.pick();
        apps.add(start(label + "-o" + (i + 1), orders, concat(common, "--server.port=" + ports[i],
            "--muster.instance.id=o" + (i + 1))));
      }
      int shopPort = LoopbackPorts.pick();
      ChildProcess s = start(label + "-shop", shop, concat(common, "--server.port=" + shopPort,
          "--muster.loadbalancer.enabled=" + musterBalancer, "--spring.cloud.loadbalancer.retry.enabled=false"));
      apps.add(s);
      for (int i = 0; i < 2; i++) {
        awaitHealthy(apps.get(i), ports[i], Duration.ofSeconds(120));
      }
      awaitHealthy(s, shopPort, Duration.ofSeconds(120));
      progress.printf("spring: control %s: 3 apps up; warming%n", label);
      long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      int okInARow = 0;
      while (okInARow < 40 && System.nanoTime() < warm) {
        okInARow = call(shopPort).isPresent() ? okInARow + 1 : 0;
        Thread.sleep(50);
      }
      long kill = System.nanoTime();
      apps.get(0).kill();
      progress.printf("spring: control %s: o1 SIGKILLed, calling for 40 s%n", label);
      int failed = 0;
      long lastFailure = -1;
      while (System.nanoTime() - kill < TimeUnit.SECONDS.toNanos(40)) {
        if (call(shopPort).isEmpty()) {
          failed++;
          lastFailure = System.nanoTime() - kill;
        }
        Thread.sleep(50);
      }
      ports[2] = LoopbackPorts.pick();
      ChildProcess o3 = start(label + "-o3", orders, concat(common, "--server.port=" + ports[2],
          "--muster.instance.id=o3"));
      apps.add(o3);
      awaitHealthy(o3, ports[2], Duration.ofSeconds(120));
      awaitRegistered(etcd, namespace, Duration.ofSeconds(30));
      long registered = System.nanoTime();
      long served = -1;
      while (System.nanoTime() - registered < TimeUnit.SECONDS.toNanos(40)) {
        if (call(shopPort).filter("o3"::equals).isPresent()) {
          served = System.nanoTime() - registered;
          break;
        }
        Thread.sleep(50);
      }
      return new Figures(Integer.toString(failed), lastFailure < 0 ? "none" : Long.toString(lastFailure / 1_000_000),
          served < 0 ? "> 40000" : Long.toString(served / 1_000_000));
    } catch (IOException | RuntimeException e) {
      failures.add("spring control " + label + ": " + e.getMessage());
      return new Figures("-", "-", "-");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Figures("-", "-", "-");
    } finally {
      apps.forEach(ChildProcess::close);
    }
  }

  private static String[] concat(String[] a, String... b) {
    String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, all, a.length, b.length);
    return all;
  }

  /** served_by of one {@code /buy} call, or empty when it failed. */
  private Optional<String> call(int shopPort) {
    try {
      return Optional.of(get(shopPort, "/buy/1").path("served_by").asText());
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  private int status(int port, String path) throws InterruptedException {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
          .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return 0;
    }
  }

  private JsonNode get(int port, String path) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException(path + " answered " + r.statusCode());
    }
    return JSON.readTree(r.body());
  }
}
