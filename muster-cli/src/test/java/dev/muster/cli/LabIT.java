package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.ChildProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A short subset of the lab, end to end through the jar: the figures are computed and the invariants hold. */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class LabIT {
  private static final List<String> SUBSET = List.of("sigstop_stale_window", "kill9_stale_window",
      "watch_resume_from_revision", "compaction_forces_resync", "tls_auth_round_trip", "shared_dependency_blip");

  @Test
  void aSubsetOfTheLabRunsEndToEndAndEveryScenarioPasses(@TempDir Path out) throws Exception {
    String[] args = new String[SUBSET.size() + 3];
    args[0] = "lab";
    for (int i = 0; i < SUBSET.size(); i++) {
      args[i + 1] = SUBSET.get(i);
    }
    args[args.length - 2] = "--out";
    args[args.length - 1] = out.toString();
    try (ChildProcess lab = MusterJar.start(args)) {
      int exit = lab.exitCode(Duration.ofMinutes(5));
      String table = Files.readString(out.resolve("output.txt"));
      System.out.println(table);
      assertThat(exit).as("lab exit; stdout %s; stderr %s", lab.stdout(), lab.stderr()).isZero();
      assertThat(table).contains(SUBSET.size() + " of " + SUBSET.size() + " scenarios passed");
      assertThat(table).containsPattern("sigstop_stale_window +PASS .*window \\[\\d+, \\d+, \\d+\\] ms");
      assertThat(table).containsPattern("kill9_stale_window +PASS .*window \\d+ ms; B \\d+ failures");
      assertThat(table).contains("resync(s)");
      assertThat(table).containsPattern("tls_auth_round_trip +PASS .*SIGTERM p1: SIGTERM→revoked \\d+ ms.*SIGKILL p2:"
          + " window \\d+ ms.*register as hello-consumer: exit 5");
      assertThat(table).containsPattern("shared_dependency_blip +PASS .*P \\(panic threshold 50 %\\) 0 of \\d+ calls"
          + " failed.*C \\(--no-panic, the control\\) \\d+ of \\d+ failed");
      assertThat(out.resolve("env.txt")).content().contains("etcd").contains("cores");
      assertThat(out.resolve("LIMITS.md")).exists();
      assertThat(out.resolve("sigstop_stale_window/consumer-a.jsonl")).isNotEmptyFile();
      assertThat(out.resolve("kill9_stale_window/watcher.jsonl")).isNotEmptyFile();
    }
  }
}
