package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code muster watch --json} as a separate process against real etcd, through an etcd restart. */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class WatchCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void watchPrintsTheSnapshotEveryUpdateAndStaleThenRecoveredAcrossAnEtcdRestart() throws Exception {
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    Instance a = Instance.of(service, "10.0.0.7", 8080).id("a");
    Instance b = Instance.of(service, "10.0.0.8", 8080).id("b");
    try (Client client = Client.builder().endpoints(etcd.endpointsString().split(",")).build();
         ChildProcess watch = MusterJar.start("watch", service, "--json", "--endpoints", etcd.endpointsString())) {
      await().atMost(Duration.ofSeconds(30)).until(() -> watch.json().eventNames().contains("snapshot"));
      put(client, a);
      await().atMost(Duration.ofSeconds(30)).until(() -> watch.json().eventNames().contains("update"));

      etcd.member(0).kill();
      await().atMost(Duration.ofSeconds(20)).until(() -> watch.json().eventNames().contains("stale"));
      etcd.member(0).restart();
      put(client, b);
      await().atMost(Duration.ofSeconds(30)).until(() -> watch.json().eventNames().contains("recovered")
          && ids(last(watch.json().lines())).containsAll(List.of("a", "b")));

      assertThat(watch.json().eventNames()).startsWith("snapshot").containsSubsequence("snapshot", "update", "stale",
          "recovered");
      assertThat(watch.json().otherLines()).as("--json prints JSON lines only").isEmpty();
      JsonNode stale = watch.json().lines().stream().filter(n -> n.path("event").asText().equals("stale")).findFirst()
          .orElseThrow();
      assertThat(ids(stale)).containsExactly("a");
      assertThat(stale.path("ts").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
      assertThat(stale.path("revision").asLong()).isPositive();
    }
  }

  @Test
  void watchExitsFourWhenNoSetArrivesWithinTheStartTimeout() throws Exception {
    ChildProcess watch = MusterJar.run(Duration.ofSeconds(60), "watch", "orders", "--endpoints",
        "http://127.0.0.1:1", "--start-timeout", "1s");
    assertThat(watch.exitCode().getAsInt()).isEqualTo(4);
    assertThat(watch.stderr()).singleElement().asString().startsWith("muster: no endpoint set for orders");
  }

  private static void put(Client client, Instance i) throws Exception {
    client.getKVClient().put(ByteSequence.from(RegistryLayout.defaults().instanceKey(i), StandardCharsets.UTF_8),
        ByteSequence.from(InstanceCodec.encode(i))).get(20, TimeUnit.SECONDS);
  }

  private static JsonNode last(List<JsonNode> lines) {
    return lines.isEmpty() ? null : lines.get(lines.size() - 1);
  }

  private static List<String> ids(JsonNode line) {
    if (line == null) {
      return List.of();
    }
    List<String> ids = new java.util.ArrayList<>();
    line.path("instances").forEach(i -> ids.add(i.path("id").asText()));
    return ids;
  }
}
