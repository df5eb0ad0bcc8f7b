package dev.muster.example.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.testing.ChildProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The two example applications as child processes of one test, on one etcd and one namespace: {@code orders}
 * instances, {@code shop}, reads of etcd and plain HTTP GETs. {@link #close()} stops every process it started, by
 * pid. The jars are the ones the reactor built ({@code orders.jar}, {@code shop.jar}: system properties set in this
 * module's POM).
 *
 * <p>Thread-safe for {@link #get}; starting and closing belong to the test's thread.
 */
final class SpringApps implements AutoCloseable {
  static final ObjectMapper JSON = new ObjectMapper();

  private final String endpoints;
  private final String namespace;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final List<ChildProcess> started = new CopyOnWriteArrayList<>();
  private final EtcdRegistry registry;

  SpringApps(String endpoints, String namespace) {
    this.endpoints = endpoints;
    this.namespace = namespace;
    this.registry = EtcdRegistry.connect(EtcdConfig.of(endpoints));
  }

  String namespace() {
    return namespace;
  }

  EtcdRegistry registry() {
    return registry;
  }

  /** Every process started so far, in order. */
  List<ChildProcess> started() {
    return List.copyOf(started);
  }

  /** Starts the application in {@code jarProperty}'s jar as {@code name}, on this etcd and namespace. */
  ChildProcess app(String name, String jarProperty, String... args) {
    List<String> rest = new ArrayList<>(List.of("-jar", Path.of(System.getProperty(jarProperty)).toString(),
        "--muster.endpoints=" + endpoints, "--muster.namespace=" + namespace, "--spring.main.banner-mode=off"));
    rest.addAll(List.of(args));
    ChildProcess p = ChildProcess.start(name, ChildProcess.javaCommand(
        List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), rest));
    started.add(p);
    return p;
  }

  /** Starts {@code orders} as {@code id} and waits until it is registered; returns the process. */
  ChildProcess orders(String id, String... args) {
    List<String> all = new ArrayList<>(List.of("--muster.instance.id=" + id));
    all.addAll(List.of(args));
    ChildProcess p = app(id, "orders.jar", all.toArray(String[]::new));
    // While the application starts (two JVMs' worth of CPU on a 2-core machine) etcd may miss a 2 s request timeout;
    // a list that times out is polled again, not a failure (two tests failed so in one suite, with a build beside it).
    await(id + " registered").atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(100))
        .ignoreException(dev.muster.RegistryUnavailableException.class)
        .until(() -> registered(id).isPresent() || !p.isAlive());
    assertThat(p.isAlive()).as("%s: %s", id, p.stderrTail()).isTrue();
    return p;
  }

  /** The {@code orders} instance registered as {@code id}, as etcd has it now. */
  Optional<Instance> registered(String id) {
    return registry.list(namespace, "orders").instances().stream().filter(i -> i.id().equals(id)).findFirst();
  }

  /** GET {@code path} on loopback {@code port}, as JSON; anything but a 200 is an {@link IOException}. */
  JsonNode get(int port, String path) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException(path + " answered " + r.statusCode() + ": " + r.body());
    }
    return JSON.readTree(r.body());
  }

  @Override
  public void close() {
    started.forEach(ChildProcess::close);
    registry.close();
  }
}
