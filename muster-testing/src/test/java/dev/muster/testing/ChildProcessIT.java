package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ChildProcessIT {
  @Test
  void closeKillsTheProcessAndItsDescendantsByPid() {
    // sh starts a sleep of its own and prints its pid, then waits: the sleep is a descendant, not the child
    ChildProcess p = ChildProcess.start("tree", List.of("sh", "-c", "sleep 300 & echo $!; wait"));
    await().atMost(Duration.ofSeconds(10)).until(() -> !p.stdout().isEmpty());
    long grandchild = Long.parseLong(p.stdout().get(0).trim());
    assertThat(ProcessHandle.of(grandchild)).hasValueSatisfying(h -> assertThat(h.isAlive()).isTrue());

    p.close();

    assertThat(p.isAlive()).isFalse();
    assertThat(ProcessHandle.of(grandchild).filter(ProcessHandle::isAlive)).isEmpty();
    assertThat(ChildProcess.everStarted()).contains(p.pid());
    assertThat(ChildProcess.stillAlive()).doesNotContain(p.pid());
  }

  @Test
  void readsJsonLinesAndKeepsOtherLinesApart() {
    try (ChildProcess p = ChildProcess.start("echo", List.of("sh", "-c",
        "echo '{\"event\":\"a\",\"ts\":\"2026-11-29T21:30:01.000001Z\"}'; echo banner; echo '{\"event\":\"b\"}';"
            + " echo oops >&2; exit 3"))) {
      assertThat(p.exitCode(Duration.ofSeconds(10))).isEqualTo(3);
      assertThat(p.json().eventNames()).containsExactly("a", "b");
      assertThat(p.json().otherLines()).containsExactly("banner");
      assertThat(JsonLog.ts(p.json().lines().get(0))).hasToString("2026-11-29T21:30:01.000001Z");
      assertThat(p.stderr()).containsExactly("oops");
      assertThat(p.toString()).contains("exited 3", "oops");
    }
  }

  /**
   * A child runs in a session and process group of its own, under its own pid: when the group of the JVM that
   * started it becomes orphaned (the shell that started {@code ./muster lab} in the background exits), the kernel's
   * SIGHUP and SIGCONT to that group must not continue a provider a scenario stopped with SIGSTOP.
   */
  @Test
  void aChildLeadsASessionOfItsOwnUnderItsOwnPid() throws Exception {
    try (ChildProcess p = ChildProcess.start("sleeper", List.of("sleep", "300"))) {
      await().atMost(Duration.ofSeconds(10)).until(() -> cmdline(p.pid()).startsWith("sleep"));
      ProcStat ours = ProcStat.of(ProcessHandle.current().pid());
      ProcStat its = ProcStat.of(p.pid());

      assertThat(its.processGroup()).as("its process group").isEqualTo(p.pid()).isNotEqualTo(ours.processGroup());
      assertThat(its.session()).as("its session").isEqualTo(p.pid()).isNotEqualTo(ours.session());
      p.pause();
      assertThat(ProcStat.of(p.pid()).stopped()).as("stopped when pause() returns").isTrue();
    }
  }

  private static String cmdline(long pid) throws Exception {
    return Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' ');
  }

  @Test
  void withTheKeepPropertyAChildsOutputStaysInThatDirectory(@org.junit.jupiter.api.io.TempDir Path keep)
      throws Exception {
    String before = System.getProperty(ChildProcess.KEEP_OUTPUT_PROPERTY);
    System.setProperty(ChildProcess.KEEP_OUTPUT_PROPERTY, keep.resolve("child-output").toString());
    try (ChildProcess p = ChildProcess.start("echoer", List.of("echo", "kept"))) {
      assertThat(p.exitCode(Duration.ofSeconds(10))).isZero();
      assertThat(p.stdoutFile()).startsWith(keep.resolve("child-output"));
      assertThat(Files.readString(p.stdoutFile())).isEqualTo("kept\n");
    } finally {
      if (before == null) {
        System.clearProperty(ChildProcess.KEEP_OUTPUT_PROPERTY);
      } else {
        System.setProperty(ChildProcess.KEEP_OUTPUT_PROPERTY, before);
      }
    }
  }

  @Test
  void exitCodeNamesAProcessThatStillRuns() {
    try (ChildProcess p = ChildProcess.start("sleeper", List.of("sleep", "300"))) {
      assertThatThrownBy(() -> p.exitCode(Duration.ofMillis(100))).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("sleeper (pid " + p.pid());
    }
  }
}
