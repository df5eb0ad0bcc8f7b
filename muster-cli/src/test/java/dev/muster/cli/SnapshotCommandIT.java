package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code muster snapshot save} and {@code verify} as real processes against a real 3-member etcd: a snapshot that
 * agrees with the live cluster, one taken before two services registered (named, exit 2), a damaged one, no file.
 * Providers register in process, each test in a namespace of its own.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SnapshotCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  private static final Duration EXIT = Duration.ofSeconds(60);
  private static final RegistrarConfig NO_DRAIN = RegistrarConfig.builder().drain(Duration.ZERO).build();
  private static EtcdRegistry registry;
  private final List<Registration> registrations = new ArrayList<>();

  @TempDir
  Path dir;

  @BeforeAll
  static void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
  }

  @AfterAll
  static void disconnect() {
    registry.close();
  }

  @AfterEach
  void deregister() {
    registrations.forEach(Registration::close);
    registrations.clear();
  }

  @Test
  void aSnapshotJustSavedVerifiesEqualToTheLiveCluster() throws IOException {
    String ns = namespace();
    register(ns, "orders", "a");
    register(ns, "orders", "b");
    register(ns, "users", "a");
    Path file = dir.resolve("etcd.snapshot");
    try (ChildProcess save = muster("snapshot", "save", file.toString(), "--json")) {
      assertThat(save.exitCode().getAsInt()).as("%s", save).isZero();
      JsonNode line = save.json().lines().get(0);
      assertThat(line.get("event").asText()).isEqualTo("snapshot-saved");
      assertThat(line.get("bytes").asLong()).isEqualTo(Files.size(file));
      assertThat(line.get("sha256").asText()).isEqualTo(Sha256File.of(file));
      assertThat(line.get("revision").asLong()).isPositive();
      assertThat(line.get("leader").asBoolean()).isTrue();
    }
    assertThat(Files.readString(Sha256File.beside(file))).isEqualTo(Sha256File.line(Sha256File.of(file),
        "etcd.snapshot"));
    assertThat(Files.exists(dir.resolve("etcd.snapshot.tmp"))).isFalse();
    try (ChildProcess verify = muster("snapshot", "verify", file.toString(), "--against")) {
      assertThat(verify.exitCode().getAsInt()).as("%s", verify).isZero();
      assertThat(verify.stdout()).anyMatch(l -> l.matches(ns + "/orders +2 +2 +equal"))
          .anyMatch(l -> l.matches(ns + "/users +1 +1 +equal"))
          .noneMatch(l -> l.startsWith("ERROR") || l.startsWith("WARNING"))
          .last().isEqualTo("verified: the snapshot agrees with the live cluster");
    }
    assertNoVerifyDirectoryLeft();
    try (ChildProcess again = muster("snapshot", "save", file.toString())) {
      assertThat(again.exitCode().getAsInt()).as("%s", again).isEqualTo(2);
      assertThat(again.stderr()).containsExactly("muster: " + file + " exists: choose another name, or --force to"
          + " replace it");
    }
  }

  @Test
  void aSnapshotTakenBeforeTwoServicesRegisteredIsReportedAsMissingExactlyThoseTwo() throws IOException {
    String ns = namespace();
    register(ns, "orders", "a");
    Path file = dir.resolve("before.snapshot");
    try (ChildProcess save = muster("snapshot", "save", file.toString())) {
      assertThat(save.exitCode().getAsInt()).as("%s", save).isZero();
      assertThat(save.stdout().get(0)).startsWith("saved " + file + ": ").contains("sha256 " + Sha256File.of(file));
    }
    register(ns, "payments", "a");
    register(ns, "payments", "b");
    register(ns, "inventory", "a");
    try (ChildProcess verify = muster("snapshot", "verify", file.toString(), "--against", "--json")) {
      assertThat(verify.exitCode().getAsInt()).as("%s", verify).isEqualTo(2);
      JsonNode report = verify.json().lines().get(0);
      assertThat(report.get("checksum").asText()).isEqualTo("ok");
      assertThat(report.get("findings").findValuesAsText("message")).containsExactly(
          ns + "/inventory: 0 instances in the snapshot, 1 live — the snapshot predates them or lost them",
          ns + "/payments: 0 instances in the snapshot, 2 live — the snapshot predates them or lost them");
    }
    try (ChildProcess verify = muster("snapshot", "verify", file.toString(), "--against")) {
      assertThat(verify.exitCode().getAsInt()).as("%s", verify).isEqualTo(2);
      assertThat(verify.stdout()).anyMatch(l -> l.matches(ns + "/orders +1 +1 +equal"))
          .anyMatch(l -> l.matches(ns + "/payments +0 +2 +missing in snapshot"))
          .filteredOn(l -> l.startsWith("ERROR")).hasSize(2);
    }
    assertNoVerifyDirectoryLeft();
  }

  @Test
  void aSnapshotWithOneByteFlippedFailsItsChecksum() throws IOException {
    register(namespace(), "orders", "a");
    Path file = dir.resolve("damaged.snapshot");
    try (EtcdMaintenance maintenance = EtcdMaintenance.connect(EtcdConfig.of(etcd.endpointsString()));
         OutputStream out = Files.newOutputStream(file)) {
      maintenance.snapshot(out, Duration.ofSeconds(30));
    }
    Files.writeString(Sha256File.beside(file), Sha256File.line(Sha256File.of(file), "damaged.snapshot"));
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length / 2] ^= 0x01;
    Files.write(file, bytes);
    try (ChildProcess verify = muster("snapshot", "verify", file.toString())) {
      assertThat(verify.exitCode().getAsInt()).as("%s", verify).isEqualTo(2);
      assertThat(verify.stdout()).anyMatch(l -> l.startsWith("ERROR  " + file + ": sha256 ")
          && l.endsWith("the file changed or was damaged since it was saved"));
    }
    assertNoVerifyDirectoryLeft();
  }

  @Test
  void verifyOfAMissingFileIsOneLineAndExitTwo() {
    Path missing = dir.resolve("no-such.snapshot");
    try (ChildProcess verify = muster("snapshot", "verify", missing.toString())) {
      assertThat(verify.exitCode().getAsInt()).as("%s", verify).isEqualTo(2);
      assertThat(verify.stderr()).containsExactly("muster: no snapshot " + missing + ": the file does not exist");
      assertThat(verify.stdout()).isEmpty();
    }
  }

  @Test
  void saveWithNoEtcdListeningNamesTheEndpointInOneLineAndWritesNothing() throws IOException {
    Path file = dir.resolve("never.snapshot");
    try (ChildProcess save = MusterJar.run(EXIT, "snapshot", "save", file.toString(), "--endpoints",
        "http://127.0.0.1:1")) {
      assertThat(save.exitCode().getAsInt()).as("%s", save).isEqualTo(4);
      assertThat(save.stderr()).hasSize(1);
      assertThat(save.stderr().get(0)).startsWith("muster: no etcd member answers: http://127.0.0.1:1 (");
    }
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files).isEmpty();
    }
  }

  private void register(String ns, String service, String id) {
    registrations.add(registry.register(Instance.of(service, "127.0.0.1", 9000).namespace(ns).id(id), NO_DRAIN));
  }

  private static String namespace() {
    return "snap-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static ChildProcess muster(String... args) {
    return MusterJar.run(EXIT, MusterJar.concat(args, "--endpoints", etcd.endpointsString()));
  }

  private static void assertNoVerifyDirectoryLeft() throws IOException {
    try (Stream<Path> tmp = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
      assertThat(tmp.map(p -> p.getFileName().toString()))
          .noneMatch(name -> name.startsWith("muster-snapshot-verify-"));
    }
  }
}
