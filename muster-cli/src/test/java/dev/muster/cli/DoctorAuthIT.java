package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster doctor} on an etcd with auth: root sees everything; a user with read on one service only gets an
 * error saying the layout could not be read and what grant it needs, while the cluster checks still run.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DoctorAuthIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().build();

  private static final Duration EXIT = Duration.ofSeconds(60);

  @Test
  void aUserWithoutReadOnTheRootIsToldWhichGrantItNeeds() throws Exception {
    try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("root", etcd.rootPassword()).build())) {
      auth.addUser("narrow", "narrow-secret");
      auth.grantConsumer("default", "orders", "narrow");
    }
    Path dir = TempDirs.create("doctor-auth");
    Path narrowPassword = Files.writeString(dir.resolve("narrow"), "narrow-secret\n");
    try (ChildProcess doctor = MusterJar.run(EXIT, "doctor", "--endpoints", etcd.endpointsString(), "--user", "root",
        "--password-file", etcd.rootPasswordFile().toString())) {
      assertThat(doctor.exitCode().getAsInt()).as("%s", doctor).isZero();
    }
    try (ChildProcess doctor = MusterJar.run(EXIT, "doctor", "--endpoints", etcd.endpointsString(), "--user",
        "narrow", "--password-file", narrowPassword.toString())) {
      assertThat(doctor.exitCode().getAsInt()).as("%s", doctor).isEqualTo(2);
      assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).startsWith("ERROR    the layout under /muster/ could"
          + " not be read").contains("grant-admin"));
      assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).contains(" leader ", "3.4"));
    }
  }
}
