package dev.muster.testing.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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

  /** How long {@link #stop} waits for every thread of the process to stop. */
  private static final Duration STOP_WAIT = Duration.ofSeconds(10);

  /**
   * SIGSTOP, then waits until every thread of {@code pid} is stopped. The kernel stops a process asynchronously:
   * {@code kill} returns once the signal is queued, one thread is woken to take it, and the process's other threads
   * run on until that thread is scheduled and stops them all. On a loaded machine that took long enough for a
   * "frozen" etcd member to answer a status call made after {@code kill} returned (EtcdMaintenanceIT, seen twice).
   * Fails if the process is gone when the signal is sent, or has a thread still not stopped after 10 s.
   */
  public static void stop(long pid) {
    send(pid, "STOP");
    long deadline = System.nanoTime() + STOP_WAIT.toNanos();
    List<String> running = notStopped(pid);
    while (!running.isEmpty()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("SIGSTOP was sent to " + pid + " but after " + STOP_WAIT.toSeconds()
            + " s these threads are still not stopped (tid state): " + running);
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + pid + " to stop", e);
      }
      running = notStopped(pid);
    }
  }

  /**
   * The threads of {@code pid} that are not stopped, each as "TID STATE" from {@code /proc/PID/task/TID/stat}
   * (state {@code T} is stopped by a signal, {@code t} by a tracer; {@code Z} and {@code X}, exited, count as
   * stopped too). Empty when every thread is stopped or the process is gone; fails if {@code /proc} cannot be read.
   */
  public static List<String> notStopped(long pid) {
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    List<String> out = new ArrayList<>();
    try (var dirs = Files.list(tasks)) {
      for (Path task : (Iterable<Path>) dirs::iterator) {
        String state = threadState(task.resolve("stat"));
        if (!state.isEmpty() && !"TtZX".contains(state)) {
          out.add(task.getFileName() + " " + state);
        }
      }
    } catch (java.nio.file.NoSuchFileException gone) {
      return List.of(); // it exited: nothing of it runs
    } catch (IOException e) {
      throw new IllegalStateException("could not read the threads of " + pid + " (" + tasks + "): " + e, e);
    }
    return out;
  }

  /** The state letter in a {@code stat} file (the field after the command's closing parenthesis); empty if gone. */
  private static String threadState(Path stat) {
    try {
      String line = Files.readString(stat);
      String[] after = line.substring(line.lastIndexOf(')') + 1).trim().split(" ", 2);
      return after[0];
    } catch (IOException e) {
      return ""; // the thread exited between the listing and the read
    }
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
