package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdVersion;
import dev.muster.testing.TempDirs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster doctor} on an etcd with auth: root sees everything; a user with read on one service only gets an
 * error saying the layout could not be read and what grant it needs, while the cluster checks still run (on etcd
 * 3.5.28 to 3.5.31, which answer a member's status only to root, the member is reported as refusing that user).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
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
      EtcdVersion etcdVersion = EtcdBinary.runningVersion();
      if (etcdVersion.atLeast(3, 5) && etcdVersion.compareTo(EtcdVersion.parse("3.5.32")) < 0) {
        // 3.5.28 to 3.5.31 answer a member's status only to root: a refusal, named, not a member gone silent
        assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).contains(" REFUSED "));
        assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).startsWith("WARNING  member m0 ")
            .contains("status could not be read", "narrow", "root"));
        assertThat(doctor.stdout()).noneSatisfy(l -> assertThat(l).contains("does not answer"));
      } else {
        assertThat(doctor.stdout()).anySatisfy(l -> assertThat(l).contains(" leader ", etcdVersion.toString()));
      }
    }
  }
}
