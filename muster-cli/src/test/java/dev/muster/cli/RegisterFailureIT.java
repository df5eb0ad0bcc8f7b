package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster register --max-failures N} when etcd goes away after the registration: the registrar gives up,
 * the process prints {@code failed} and exits 1 with one line on stderr. A class of its own because it stops its
 * etcd member.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class RegisterFailureIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void losingEtcdForMoreThanMaxFailuresKeepalivesExitsOneAfterPrintingFailed() throws Exception {
    try (ChildProcess p = MusterJar.start("register", "--endpoints", etcd.endpointsString(), "--service", "fails",
        "--address", "127.0.0.1:9100", "--id", "f-1", "--ttl", "3s", "--keepalive", "500ms", "--max-failures", "3")) {
      await("registered").atMost(Duration.ofSeconds(30)).until(() -> p.json().eventNames().contains("registered"));
      long stopped = System.nanoTime();
      etcd.member(0).stop();

      assertThat(p.exitCode(Duration.ofSeconds(30))).as("%s", p).isEqualTo(1);
      System.out.printf("[register IT] etcd stopped -> exit 1 with --max-failures 3, keepalive 500ms: %d ms%n",
          (System.nanoTime() - stopped) / 1_000_000);
      assertThat(p.json().eventNames()).as("%s", p).containsSubsequence("registered", "unreachable", "failed");
      assertThat(p.stderr()).as("%s", p).hasSize(1);
      assertThat(p.stderr().get(0)).startsWith("muster: registration of default/fails/v1/f-1 failed: ")
          .contains("3 consecutive");
    }
  }
}
