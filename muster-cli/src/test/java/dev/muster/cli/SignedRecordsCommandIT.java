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
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Signed records from the command line, as real {@code muster.jar} processes: {@code keygen} makes two keys,
 * {@code register --sign-key} signs two providers (one per key, as while keys rotate), a forged record is put
 * straight into etcd, and {@code watch --trust-key} (both keys) serves the two providers only while a plain
 * {@code watch} serves the forgery too.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SignedRecordsCommandIT {
  private static final Duration WITHIN = Duration.ofSeconds(30);

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @TempDir
  Path dir;

  @Test
  void aWatcherTrustingTheProvidersKeysExcludesAForgeryThatAPlainWatcherServes() throws Exception {
    String service = "signed-" + UUID.randomUUID().toString().substring(0, 8);
    String endpoints = etcd.endpointsString();
    for (String name : List.of("old", "new")) {
      try (ChildProcess keygen = MusterJar.run(WITHIN, "keygen", "--out", dir.resolve(name).toString())) {
        assertThat(keygen.exitCode().getAsInt()).as("%s", keygen).isZero();
        assertThat(keygen.stdout().get(0)).matches("key id [0-9a-f]{16}");
      }
    }
    try (ChildProcess p1 = register(service, "p1", "old", endpoints);
         ChildProcess p2 = register(service, "p2", "new", endpoints);
         ChildProcess trusting = MusterJar.start("watch", service, "--json", "--endpoints", endpoints,
             "--trust-key", dir.resolve("old.pub").toString(), "--trust-key", dir.resolve("new.pub").toString());
         ChildProcess plain = MusterJar.start("watch", service, "--json", "--endpoints", endpoints);
         Client forger = Client.builder().endpoints(endpoints.split(",")).build()) {
      for (ChildProcess p : List.of(p1, p2)) {
        await().atMost(WITHIN).until(() -> p.json().eventNames().contains("registered") || !p.isAlive());
        assertThat(p.json().eventNames()).as("%s", p).contains("registered");
      }
      await().atMost(WITHIN).until(() -> ids(last(trusting)).equals(List.of("p1", "p2")));

      long lease = forger.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
      Instance forged = Instance.of(service, "127.0.0.1", 6666).id("forged");
      long revision = forger.getKVClient().put(
          ByteSequence.from(RegistryLayout.defaults().instanceKey(forged), StandardCharsets.UTF_8),
          ByteSequence.from(InstanceCodec.encode(forged)), PutOption.builder().withLeaseId(lease).build())
          .get(10, TimeUnit.SECONDS).getHeader().getRevision();

      await().atMost(WITHIN).until(() -> last(plain) != null && last(plain).path("revision").asLong() >= revision
          && last(trusting) != null && last(trusting).path("revision").asLong() >= revision);
      assertThat(ids(last(plain))).containsExactly("forged", "p1", "p2");
      assertThat(last(plain).path("unverified").asLong()).isZero();
      assertThat(ids(last(trusting))).containsExactly("p1", "p2");
      assertThat(last(trusting).path("unverified").asLong()).isEqualTo(1);
      assertThat(trusting.json().otherLines()).as("--json prints JSON lines only").isEmpty();
    }
  }

  private ChildProcess register(String service, String id, String key, String endpoints) {
    return MusterJar.start("register", "--service", service, "--id", id, "--address", "127.0.0.1:9000",
        "--ttl", "3s", "--drain", "0s", "--endpoints", endpoints, "--sign-key", dir.resolve(key + ".key").toString());
  }

  private static JsonNode last(ChildProcess watch) {
    List<JsonNode> sets = watch.json().lines().stream().filter(n -> n.has("instances")).toList();
    return sets.isEmpty() ? null : sets.get(sets.size() - 1);
  }

  private static List<String> ids(JsonNode line) {
    List<String> ids = new ArrayList<>();
    if (line != null) {
      line.path("instances").forEach(i -> ids.add(i.path("id").asText()));
    }
    return ids.stream().sorted().toList();
  }
}
