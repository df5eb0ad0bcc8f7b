package dev.muster.testing.internal;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Sends POSIX signals to one process by pid. Java's {@link ProcessHandle} covers SIGTERM and SIGKILL;
 * SIGSTOP and SIGCONT go through the system {@code kill} command, always with a numeric pid.
 */
public final class Signals {
  private Signals() {}

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
