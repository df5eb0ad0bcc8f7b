package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Runs the real jar, {@code muster etcd}, as a separate process and stops it with SIGTERM. */
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

  @Test
  void withTlsAndAuthItPrintsFlagsThatRegisterAndListAsRootAndWithoutAnEtcdUserLsExitsFive() throws Exception {
    Duration exit = Duration.ofSeconds(30);
    try (ChildProcess etcd = MusterJar.start("etcd", "--tls", "--auth", "--client-port", "0",
        "--client-cert", "nobody")) {
      org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60))
          .until(() -> etcd.stdout().contains("Ctrl-C stops every member.") || !etcd.isAlive());
      List<String> out = etcd.stdout();
      String flagsLine = out.stream().filter(l -> l.startsWith("--endpoints ")).findFirst().orElseThrow(
          () -> new AssertionError("no --endpoints line: " + etcd));
      String[] flags = flagsLine.split(" ");
      Map<String, String> byFlag = new LinkedHashMap<>();
      for (int i = 0; i + 1 < flags.length; i += 2) {
        byFlag.put(flags[i], flags[i + 1]);
      }
      assertThat(byFlag).containsOnlyKeys("--endpoints", "--cacert", "--cert", "--key", "--user", "--password-file");
      assertThat(byFlag.get("--endpoints")).startsWith("https://127.0.0.1:");
      assertThat(byFlag.get("--cert")).endsWith("client-root.pem");
      assertThat(byFlag.get("--user")).isEqualTo("root");
      assertThat(out).contains("export MUSTER_ENDPOINTS=" + byFlag.get("--endpoints"),
          "export MUSTER_CACERT=" + byFlag.get("--cacert"), "export MUSTER_CERT=" + byFlag.get("--cert"),
          "export MUSTER_KEY=" + byFlag.get("--key"), "export MUSTER_USER=root",
          "export MUSTER_PASSWORD_FILE=" + byFlag.get("--password-file"));
      assertThat(out).anyMatch(l -> l.contains("muster auth grant-provider SERVICE USER"));
      Path pki = Path.of(byFlag.get("--cacert")).getParent();
      List<Long> memberPids = out.stream().map(MEMBER::matcher).filter(Matcher::matches)
          .map(m -> Long.parseLong(m.group(1))).toList();
      assertThat(memberPids).hasSize(1);

      MusterJar.assertRegisterThenLsSeesIt("sec-" + UUID.randomUUID().toString().substring(0, 8), flags);
      try (ChildProcess ls = MusterJar.run(exit, "ls", "--endpoints", byFlag.get("--endpoints"), "--cacert",
          byFlag.get("--cacert"))) {
        assertThat(ls.exitCode().getAsInt()).as("no client certificate, no user: %s", ls).isEqualTo(5);
        assertThat(ls.stderr()).singleElement().asString().startsWith("muster: ");
      }
      String nobody = out.stream().filter(l -> l.startsWith("client certificate for etcd user nobody: "))
          .findFirst().orElseThrow(() -> new AssertionError("no certificate line for nobody: " + out));
      String[] nobodyCert = nobody.substring(nobody.indexOf(": ") + 2).split(" ");
      try (ChildProcess ls = MusterJar.run(exit, MusterJar.concat(new String[] {"ls", "--endpoints",
          byFlag.get("--endpoints"), "--cacert", byFlag.get("--cacert")}, nobodyCert))) {
        assertThat(ls.exitCode().getAsInt()).as("a certificate for no etcd user: %s", ls).isEqualTo(5);
        assertThat(ls.stderr()).singleElement().asString().contains("nobody");
      }

      etcd.terminate();
      assertThat(etcd.awaitExit(exit)).as("%s", etcd).isTrue();
      assertThat(pki).doesNotExist();
      assertThat(ProcessHandle.of(memberPids.get(0)).filter(ProcessHandle::isAlive)).isEmpty();
    }
  }
}
