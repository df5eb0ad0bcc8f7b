package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
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

/**
 * {@code muster doctor} as a real process against a real 3-member cluster: healthy (exit 0), a member SIGSTOPped
 * (an error naming it, exit 2), and a malformed value and a key without a lease under the layout (warnings naming
 * them, exit 1).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DoctorCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  private static final Duration EXIT = Duration.ofSeconds(60);

  private static ChildProcess doctor(String... more) {
    return MusterJar.run(EXIT, MusterJar.concat(new String[] {"doctor", "--endpoints", etcd.endpointsString(),
        "--timeout", "2s"}, more));
  }

  @Test
  void aHealthyClusterWithAProviderIsAllWell() {
    String service = "doc-" + UUID.randomUUID().toString().substring(0, 8);
    try (ChildProcess provider = MusterJar.start("register", "--endpoints", etcd.endpointsString(), "--service",
        service, "--id", "a", "--address", "127.0.0.1:9000", "--ttl", "5s")) {
      MusterJar.awaitEvent(provider, "registered");
      try (ChildProcess doctor = doctor()) {
        assertThat(doctor.exitCode().getAsInt()).as("%s", doctor).isZero();
        List<String> out = doctor.stdout();
        assertThat(out.get(0)).matches("cluster: 3 member\\(s\\), revision \\d+");
        assertThat(out).filteredOn(l -> l.contains(" leader ")).hasSize(1);
        assertThat(out).filteredOn(l -> l.contains(" follower ")).hasSize(2);
        assertThat(out).anySatisfy(l -> assertThat(l).startsWith("default/" + service).contains(" 1 ", "v1"));
        assertThat(out.get(out.size() - 1)).isEqualTo("doctor: all well");
      }
    }
  }

  @Test
  void aStoppedMemberIsAnErrorThatNamesIt() {
    EtcdMember frozen = etcd.members().stream().filter(m -> !etcd.leader().orElseThrow().equals(m)).findFirst()
        .orElseThrow();
    frozen.pause();
    try (ChildProcess doctor = doctor()) {
      assertThat(doctor.exitCode().getAsInt()).as("%s", doctor).isEqualTo(2);
      assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).startsWith("ERROR    member " + frozen.name() + " ("
          + frozen.clientUrl().toString().replaceAll("/$", "")).contains("does not answer (no answer within 2000 ms)"));
      assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).startsWith(frozen.name()).contains("NO ANSWER"));
    } finally {
      frozen.resume();
    }
  }

  @Test
  void aMalformedValueAndAKeyWithoutALeaseAreWarningsThatNameThem() throws Exception {
    String ns = "doc" + UUID.randomUUID().toString().substring(0, 6);
    String malformed = "/muster/" + ns + "/orders/v1/bad";
    String leaseless = "/muster/" + ns + "/orders/v1/forever";
    try (Client client = Client.builder().endpoints(etcd.endpointsString().split(",")).waitForReady(false)
        .build()) {
      put(client, malformed, "{\"address\":\"10.0.0.9\",\"port\":\"80\"}");
      put(client, leaseless, "{\"schema\":1,\"address\":\"10.0.0.9\",\"port\":80,\"state\":\"UP\"}");
      try (ChildProcess doctor = doctor("--namespace", ns)) {
        assertThat(doctor.exitCode().getAsInt()).as("%s", doctor).isEqualTo(1);
        List<String> out = doctor.stdout();
        assertThat(out).anySatisfy(l -> assertThat(l).startsWith("WARNING  " + malformed + " has a malformed value"));
        assertThat(out).anySatisfy(l -> assertThat(l).startsWith("WARNING  " + leaseless + " has no lease"));
        assertThat(out).noneSatisfy(l -> assertThat(l).startsWith("ERROR"));
        assertThat(out.get(out.size() - 1)).isEqualTo("doctor: 0 error(s), 3 warning(s)");
      }
      try (ChildProcess doctor = doctor("--namespace", ns, "--json")) {
        assertThat(doctor.exitCode().getAsInt()).isEqualTo(1);
        assertThat(doctor.json().lines()).filteredOn(n -> n.path("event").asText().equals("finding"))
            .extracting(n -> n.get("what").asText()).anySatisfy(w -> assertThat(w).startsWith(leaseless));
      }
    } finally {
      try (Client client = Client.builder().endpoints(etcd.endpointsString().split(",")).waitForReady(false)
          .build()) {
        client.getKVClient().delete(bytes(malformed)).get(10, TimeUnit.SECONDS);
        client.getKVClient().delete(bytes(leaseless)).get(10, TimeUnit.SECONDS);
      }
    }
  }

  @Test
  void aBadFlagIsOneLineAndExit2() {
    try (ChildProcess doctor = doctor("--quota", "lots")) {
      assertThat(doctor.exitCode().getAsInt()).isEqualTo(2);
      assertThat(doctor.stderr()).singleElement().asString().contains("'lots' is not a size");
    }
  }

  private static void put(Client client, String key, String value) throws Exception {
    client.getKVClient().put(bytes(key), ByteSequence.from(value, StandardCharsets.UTF_8)).get(10, TimeUnit.SECONDS);
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
