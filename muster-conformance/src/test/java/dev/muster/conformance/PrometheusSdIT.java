package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.console.ConsoleConfig;
import dev.muster.console.ConsoleServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The console's Prometheus HTTP service discovery, read by Debian's real {@code prometheus}
 * ({@code MUSTER_PROMETHEUS_BIN}, which {@code ./muster test} fetches): the targets Prometheus discovers are the UP
 * instances, with Muster's labels, and a draining one leaves them.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PrometheusSdIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private final List<AutoCloseable> closing = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  private static Path prometheus() {
    String bin = System.getenv("MUSTER_PROMETHEUS_BIN");
    if (bin == null || !Files.isExecutable(Path.of(bin))) {
      throw new AssertionError("MUSTER_PROMETHEUS_BIN (" + bin + ") is not a prometheus binary: run the tests with"
          + " ./muster test, which fetches Debian's into .cache/prometheus");
    }
    return Path.of(bin);
  }

  /** Target (ADDRESS:PORT) → its discovered labels, from Prometheus's API. */
  private Map<String, JsonNode> activeTargets(int port) throws IOException, InterruptedException {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
        + "/api/v1/targets?state=active")).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
    Map<String, JsonNode> out = new HashMap<>();
    for (JsonNode t : JSON.readTree(r.body()).path("data").path("activeTargets")) {
      out.put(t.path("discoveredLabels").path("__address__").asText(), t.path("discoveredLabels"));
    }
    return out;
  }

  @Test
  void prometheusDiscoversTheUpInstancesWithTheirLabelsAndDropsADrainingOne() throws Exception {
    Path dir = TempDirs.create("muster-prometheus-sd-");
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    closing.add(registry);
    EtcdMaintenance maintenance = EtcdMaintenance.connect(EtcdConfig.of(etcd.endpointsString()));
    closing.add(maintenance);
    RegistrarConfig noDrain = RegistrarConfig.builder().drain(Duration.ZERO).shutdownHook(false).build();
    Registration a = registry.register(Instance.of("metrics", "127.0.0.1", 9101).id("a").zone("z1").tag("canary"),
        noDrain);
    closing.add(a);
    Registration b = registry.register(Instance.of("metrics", "127.0.0.1", 9102).id("b").weight(300), noDrain);
    closing.add(b);
    ConsoleServer console = ConsoleServer.start(registry, maintenance, ConsoleConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0)).build());
    closing.add(console);
    Path token = dir.resolve("console.token");
    Files.writeString(token, console.token());
    int port = LoopbackPorts.pick();
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(config, String.join("\n",
        "global:",
        "  scrape_interval: 1h",
        "scrape_configs:",
        "  - job_name: muster",
        "    http_sd_configs:",
        "      - url: http://127.0.0.1:" + console.address().getPort() + "/api/prometheus-sd?namespace=default",
        "        refresh_interval: 1s",
        "        authorization:", // type spelt out: 2.42's http_sd sends the bare token without it
        "          type: Bearer",
        "          credentials_file: " + token,
        ""));
    ChildProcess p = ChildProcess.start("prometheus", List.of(prometheus().toString(),
        "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
        "--web.listen-address=127.0.0.1:" + port));
    closing.add(p);

    String sd = "http://127.0.0.1:" + console.address().getPort() + "/api/prometheus-sd?namespace=default";
    try {
      await("prometheus discovers both").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
          .ignoreExceptions().until(() -> activeTargets(port).keySet().containsAll(List.of("127.0.0.1:9101",
              "127.0.0.1:9102")));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create(sd)).header("Authorization",
          "Bearer " + console.token()).build(), HttpResponse.BodyHandlers.ofString());
      throw new AssertionError("prometheus discovered " + activeTargets(port).keySet() + "; the console answers "
          + answer.statusCode() + " " + answer.body() + "; prometheus said: " + p.stderrTail(), e);
    }
    JsonNode labels = activeTargets(port).get("127.0.0.1:9101");
    assertThat(labels.path("__meta_muster_service").asText()).isEqualTo("metrics");
    assertThat(labels.path("__meta_muster_instance").asText()).isEqualTo("a");
    assertThat(labels.path("__meta_muster_zone").asText()).isEqualTo("z1");
    assertThat(labels.path("__meta_muster_tags").asText()).isEqualTo(",canary,");
    assertThat(activeTargets(port).get("127.0.0.1:9102").path("__meta_muster_weight").asText()).isEqualTo("300");

    b.update(i -> i.state(InstanceState.DRAINING)).join(); // as a draining provider publishes it; its lease lives on

    await("prometheus drops the draining one").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250))
        .ignoreExceptions().until(() -> !activeTargets(port).containsKey("127.0.0.1:9102"));
    assertThat(activeTargets(port)).containsKey("127.0.0.1:9101");
  }
}
