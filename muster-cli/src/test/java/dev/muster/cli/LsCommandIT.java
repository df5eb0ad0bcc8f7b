package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code muster ls} as a real process: values written straight into etcd, good and malformed, and no etcd. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LsCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration EXIT = Duration.ofSeconds(30);

  @Test
  void lsShowsTheDecodedInstancesInATableAndTheMalformedKeysAfterIt() throws Exception {
    String service = "ls-" + UUID.randomUUID().toString().substring(0, 8);
    String prefix = "/muster/blue/" + service + "/v2/";
    try (Client client = Client.builder().endpoints(etcd.endpointsString().split(",")).waitForReady(false).build()) {
      put(client, prefix + "good-1", "{\"schema\":1,\"address\":\"fd00::7\",\"port\":8443,\"state\":\"DRAINING\","
          + "\"weight\":5,\"tags\":[\"canary\"],\"metadata\":{\"team\":\"x\"}}");
      put(client, prefix + "bad-1", "{\"address\":\"10.0.0.9\",\"port\":\"80\"}");
      put(client, prefix + "evil\nmuster: a forged line", "{}"); // a key that would print a line of its own
    }
    try (ChildProcess ls = MusterJar.run(EXIT, "ls", service, "--namespace", "blue", "--endpoints",
        etcd.endpointsString())) {
      assertThat(ls.exitCode().getAsInt()).as("%s", ls).isZero();
      List<String> out = ls.stdout();
      assertThat(out.get(0)).matches("revision \\d+, 1 instance\\(s\\)");
      assertThat(out.get(1).indexOf("ADDRESS")).isEqualTo(out.get(2).indexOf("[fd00::7]:8443"));
      assertThat(out.get(2)).contains(service, "v2", "good-1", "DRAINING", "5", "-");
      assertThat(out.get(3)).startsWith("! " + prefix + "bad-1: ").contains("\"port\"");
      assertThat(out.get(4)).startsWith("! " + prefix + "evil\\nmuster: a forged line: ");
      assertThat(out).hasSize(5).noneMatch(line -> line.startsWith("muster: a forged line"));
    }
    try (ChildProcess ls = MusterJar.run(EXIT, "ls", service, "--json", "--namespace", "blue", "--endpoints",
        etcd.endpointsString())) {
      JsonNode line = ls.json().lines().get(0);
      assertThat(line.get("event").asText()).isEqualTo("instance");
      assertThat(line.get("address").asText()).isEqualTo("fd00::7");
      assertThat(line.get("tags").get(0).asText()).isEqualTo("canary");
      assertThat(line.get("metadata").get("team").asText()).isEqualTo("x");
      assertThat(line.get("ts").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
    }
  }

  @Test
  void lsWithNoEtcdListeningExitsFourWithOneLine() throws Exception {
    try (ChildProcess ls = MusterJar.run(EXIT, "ls", "--endpoints", "http://127.0.0.1:1")) {
      assertThat(ls.exitCode().getAsInt()).as("%s", ls).isEqualTo(4);
      assertThat(ls.stderr()).hasSize(1);
      assertThat(ls.stderr().get(0)).startsWith("muster: ").contains("did not answer").contains("--endpoints");
      assertThat(ls.stdout()).isEmpty();
    }
  }

  private static void put(Client client, String key, String value) throws Exception {
    client.getKVClient().put(KeyWatch.bytes(key), KeyWatch.bytes(value)).get(10, TimeUnit.SECONDS);
  }
}
