package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.TempDirs;
import dev.muster.testing.TestPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The command line over mutual TLS: a real {@code muster.jar} process against an etcd that serves only TLS. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class TlsCommandIT {
  private static final TestPki PKI = TestPki.create(TempDirs.create("muster-tls-cli-"));
  private static final Duration EXIT = Duration.ofSeconds(30);

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).tls(PKI).build();

  @Test
  void registerAndLsWorkWithTheTlsFlags() throws Exception {
    String service = "tls-" + UUID.randomUUID().toString().substring(0, 8);
    TestPki.Pair client = PKI.client("orders");
    String[] tls = {"--endpoints", etcd.endpointsString(), "--cacert", PKI.ca().toString(), "--cert",
        client.certificate().toString(), "--key", client.key().toString()};
    MusterJar.assertRegisterThenLsSeesIt(service, tls);
  }

  @Test
  void aWrongCaIsOneLineNamingTheTlsCauseAndExitFive() throws Exception {
    TestPki.Pair client = PKI.client("orders");
    try (ChildProcess ls = MusterJar.run(EXIT, "ls", "--endpoints", etcd.endpointsString(), "--cacert",
        PKI.otherCa().toString(), "--cert", client.certificate().toString(), "--key", client.key().toString())) {
      assertThat(ls.exitCode().getAsInt()).as("%s", ls).isEqualTo(5);
      assertThat(ls.stderr()).hasSize(1);
      assertThat(ls.stderr().get(0)).startsWith("muster: ").contains("TLS: ");
    }
  }

  @Test
  void aMissingKeyFileIsOneLineNamingItAndExitTwo() throws Exception {
    try (ChildProcess ls = MusterJar.run(EXIT, "ls", "--endpoints", etcd.endpointsString(), "--cacert",
        PKI.ca().toString(), "--cert", PKI.client("orders").certificate().toString(), "--key", "/nonexistent.pem")) {
      assertThat(ls.exitCode().getAsInt()).as("%s", ls).isEqualTo(2);
      assertThat(ls.stderr()).singleElement().asString().contains("clientKey").contains("/nonexistent.pem")
          .contains("no such file");
    }
  }
}
