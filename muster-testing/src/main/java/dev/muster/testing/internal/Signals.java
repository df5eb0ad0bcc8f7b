package dev.muster.testing.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Sends POSIX signals to one process by pid. Java's {@link ProcessHandle} covers SIGTERM and SIGKILL;
 * SIGSTOP and SIGCONT go through the system {@code kill} command, always with a numeric pid.
 */
public final class Signals {
  private static final Optional<Path> SETSID = Optional.of(Path.of("/usr/bin/setsid")).filter(Files::isExecutable);

  private Signals() {}

  /**
   * {@code command} run through {@code setsid}, in a session and process group of its own, so that no signal meant
   * for its parent's group reaches it. The one that matters: when the process group of a process we stopped with
   * SIGSTOP becomes orphaned (the shell that started {@code ./muster lab} in the background exits), the kernel sends
   * that group SIGHUP and SIGCONT (POSIX, {@code _exit}), and a scenario's stopped provider or etcd member carries on
   * (a lab run saw p1's keepalives resume 0.7 s into its SIGSTOP). {@code setsid} execs the command in the same
   * process (a spawned child is never a group leader), so the pid is the command's. Unchanged when
   * {@code /usr/bin/setsid} (util-linux) is missing or the command's program is a path that cannot run (so starting
   * it fails as before, with the program's name).
   */
  public static List<String> inOwnSession(List<String> command) {
    Path program = Path.of(command.get(0));
    if (SETSID.isEmpty() || (program.isAbsolute() && !Files.isExecutable(program))) {
      return command;
    }
    List<String> detached = new ArrayList<>(command.size() + 1);
    detached.add(SETSID.get().toString());
    detached.addAll(command);
    return detached;
  }

  /** Sends {@code signal} (e.g. "STOP", "CONT") to {@code pid}; fails if the pid is gone. */
  public static void send(long pid, String signal) {
    ProcessBuilder pb = new ProcessBuilder("kill", "-s", signal, Long.toString(pid))
        .redirectErrorStream(true);
    try {
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("kill -s " + signal + " " + pid + " did not finish in 10 s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException("kill -s " + signal + " " + pid + " failed: " + out);
      }
    } catch (IOException e) {
      throw new IllegalStateException("could not run kill -s " + signal + " " + pid + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + pid, e);
    }
  }
}
