package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs the real jar, {@code muster etcd --members 3}, as a separate process and stops it with SIGTERM. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdCommandIT {
  private static final Pattern MEMBER = Pattern.compile("^\\s+m\\d\\s+\\S+\\s+pid (\\d+)$");

  @Test
  void aThreeMemberDevRegistryServesClientsAndSigtermLeavesNoProcessBehind() throws Exception {
    Path jar = Path.of(System.getProperty("muster.jar", "target/muster.jar"));
    assertThat(jar).exists();
    Process cli = new ProcessBuilder("java", "-jar", jar.toString(), "etcd", "--members", "3", "--client-port", "0")
        .redirectErrorStream(true).start();
    List<Long> memberPids = new ArrayList<>();
    String endpoints = null;
    List<String> seen = new ArrayList<>();
    try {
      BufferedReader lines = new BufferedReader(new InputStreamReader(cli.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = lines.readLine()) != null) {
        seen.add(line);
        Matcher m = MEMBER.matcher(line);
        if (m.matches()) {
          memberPids.add(Long.parseLong(m.group(1)));
        }
        if (line.startsWith("--endpoints ")) {
          endpoints = line.substring("--endpoints ".length());
        }
        if (line.startsWith("Ctrl-C")) {
          break;
        }
      }
      assertThat(endpoints).as("output: %s", seen).isNotNull();
      assertThat(memberPids).hasSize(3);
      assertThat(endpoints.split(",")).hasSize(3);

      try (Client client = Client.builder().endpoints(endpoints.split(",")).build()) {
        ByteSequence key = ByteSequence.from("/cli/etcd", StandardCharsets.UTF_8);
        client.getKVClient().put(key, key).get(10, TimeUnit.SECONDS);
        assertThat(client.getKVClient().get(key).get(10, TimeUnit.SECONDS).getKvs()).hasSize(1);
      }

      cli.destroy(); // SIGTERM
      assertThat(cli.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(memberPids).allSatisfy(pid ->
          assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("member pid %d", pid).isEmpty());
    } finally {
      cli.destroyForcibly();
      for (long pid : memberPids) {
        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
      }
    }
  }

  @Test
  void aPortInUseIsReportedInOneLineAndExitsNonZero() throws Exception {
    Path jar = Path.of(System.getProperty("muster.jar", "target/muster.jar"));
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Process cli = new ProcessBuilder("java", "-jar", jar.toString(), "etcd", "--client-port",
          Integer.toString(taken.getLocalPort())).redirectErrorStream(true).start();
      String output = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(cli.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(cli.exitValue()).isEqualTo(1);
      assertThat(output).contains("muster: port " + taken.getLocalPort() + " on 127.0.0.1 is in use");
      assertThat(Files.exists(jar)).isTrue();
    }
  }
}
