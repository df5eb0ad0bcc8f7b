package dev.muster.testing;

import dev.muster.testing.internal.ProcessReaper;
import dev.muster.testing.internal.Signals;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A process a test, the lab or the bench started (a {@code muster} command, a provider JVM, a ZooKeeper server),
 * with its stdout and stderr in two files that can be read while it runs ({@link #json()}, {@link #stdout()}).
 *
 * <p>Stopping is always by pid, never by name: {@link #close()} sends SIGKILL to the process and to every
 * descendant it has at that moment (a {@code muster etcd} child's etcd members, say), and waits until they are
 * gone. Every child is also tracked by muster-testing's reaper, so a JVM that exits without reaching a
 * {@code close()} (a failed test outside try-with-resources, Ctrl-C) still kills it, descendants first, by pid. A
 * test or scenario should hold a child in try-with-resources or close it in {@code finally}.
 *
 * <p>Thread-safe: the state is the {@link Process}; reads go to the files, and {@link #json()}'s follower is
 * synchronized.
 */
public final class ChildProcess implements AutoCloseable {
  /**
   * For short-lived helper JVMs on a small shared machine: the client compiler only and the serial collector, so
   * they start and warm up fast; steady-state speed is not what they are for.
   */
  public static final List<String> FAST_START_JVM_FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  private static final Duration KILL_WAIT = Duration.ofSeconds(10);
  private static final Set<ProcessHandle> STARTED = ConcurrentHashMap.newKeySet();

  private final String name;
  private final List<String> command;
  private final Process process;
  private final Path stdout;
  private final Path stderr;
  private final JsonLogFollower json;

  private ChildProcess(String name, List<String> command, Process process, Path stdout, Path stderr) {
    this.name = name;
    this.command = command;
    this.process = process;
    this.stdout = stdout;
    this.stderr = stderr;
    this.json = new JsonLogFollower(stdout);
  }

  /** Starts {@code command} as {@code name}, its stdout written to {@code stdout} and its stderr to {@code stderr}. */
  public static ChildProcess start(String name, List<String> command, Path stdout, Path stderr) {
    List<String> cmd = List.copyOf(command);
    try {
      createParent(stdout);
      createParent(stderr);
      Process p = new ProcessBuilder(Signals.inOwnSession(cmd)).redirectOutput(stdout.toFile())
          .redirectError(stderr.toFile()).start();
      ProcessReaper.track(p.toHandle());
      STARTED.add(p.toHandle());
      return new ChildProcess(name, cmd, p, stdout, stderr);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + " (" + String.join(" ", cmd) + "): " + e.getMessage(),
          e);
    }
  }

  /**
   * The system property naming a directory where {@link #start(String, List)} keeps each child's output after this
   * JVM exits, so that a failed run's providers and consumers can be read afterwards ({@code ./muster test} sets it
   * to each module's {@code target/child-output}). Unset: a temporary directory, deleted when this JVM exits.
   */
  public static final String KEEP_OUTPUT_PROPERTY = "muster.child.output";

  /**
   * As {@link #start(String, List, Path, Path)}, with stdout and stderr in a directory of their own: below
   * {@link #KEEP_OUTPUT_PROPERTY}'s directory when it is set, else a temporary one that is deleted when this JVM exits
   * (either way a failed test's output can still be read after {@link #close()}).
   */
  public static ChildProcess start(String name, List<String> command) {
    try {
      String prefix = "muster-child-" + name.replaceAll("[^A-Za-z0-9_.-]", "_") + "-";
      String keep = System.getProperty(KEEP_OUTPUT_PROPERTY, "");
      Path dir;
      if (keep.isBlank()) {
        dir = Files.createTempDirectory(prefix);
        ProcessReaper.trackTempDir(dir);
      } else {
        dir = Files.createTempDirectory(Files.createDirectories(Path.of(keep)), prefix);
      }
      return start(name, command, dir.resolve("stdout"), dir.resolve("stderr"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory for " + name + "'s output: " + e.getMessage(), e);
    }
  }

  /** {@code JAVA jvmFlags... rest...}, with the {@code java} of the JVM this runs in. */
  public static List<String> javaCommand(List<String> jvmFlags, List<String> rest) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    command.addAll(rest);
    return command;
  }

  /** Pids of every child this JVM started through this class, alive or not. */
  public static Set<Long> everStarted() {
    return STARTED.stream().map(ProcessHandle::pid).collect(java.util.stream.Collectors.toUnmodifiableSet());
  }

  /** Pids of the children this JVM started that are still alive. */
  public static Set<Long> stillAlive() {
    return STARTED.stream().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
        .collect(java.util.stream.Collectors.toUnmodifiableSet());
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  /** The command line it was started with. */
  public List<String> command() {
    return command;
  }

  public Path stdoutFile() {
    return stdout;
  }

  public Path stderrFile() {
    return stderr;
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The lines written to stdout so far. */
  public List<String> stdout() {
    return lines(stdout);
  }

  /** The lines written to stderr so far. */
  public List<String> stderr() {
    return lines(stderr);
  }

  /** Stdout as a JSON-lines log, as written so far (each call parses only what was written since the last one). */
  public JsonLog json() {
    return json.read();
  }

  /** The last lines of stderr joined with {@code " | "}, for an error message. */
  public String stderrTail() {
    return tail(stderr());
  }

  /** SIGSTOP, by pid; returns once every thread of the process is stopped. */
  public void pause() {
    Signals.stop(pid());
  }

  /** SIGCONT, by pid. */
  public void resume() {
    Signals.send(pid(), "CONT");
  }

  /** Sends {@code signal} ({@code "STOP"}, {@code "CONT"}, {@code "HUP"}...) by pid. */
  public void signal(String signal) {
    Signals.send(pid(), signal);
  }

  /** SIGTERM, by pid: a graceful stop (a registrar drains and revokes, a caller prints its summary). */
  public void terminate() {
    process.toHandle().destroy();
  }

  /** SIGKILL, by pid, to the process and its descendants; waits until they are gone. */
  public void kill() {
    List<ProcessHandle> tree = new ArrayList<>(process.toHandle().descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroyForcibly);
    for (ProcessHandle h : tree) {
      try {
        h.onExit().get(KILL_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        // SIGKILL was sent; the reaper sends it again at JVM exit if it is somehow still there
      }
    }
    if (!process.isAlive()) {
      ProcessReaper.forget(process.toHandle());
    }
  }

  /** True once the process has exited, waiting up to {@code limit}. */
  public boolean awaitExit(Duration limit) {
    try {
      return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The exit code, waiting up to {@code limit}; an {@link IllegalStateException} naming it if it still runs. */
  public int exitCode(Duration limit) {
    if (!awaitExit(limit)) {
      throw new IllegalStateException(this + " still running after " + limit.toMillis() + " ms");
    }
    return process.exitValue();
  }

  /** The exit code once the process has exited; empty while it runs. */
  public OptionalInt exitCode() {
    return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
  }

  /** {@link #kill()} if it or a descendant is still alive; safe to call more than once. */
  @Override
  public void close() {
    if (process.isAlive() || process.toHandle().descendants().findAny().isPresent()) {
      kill();
    }
    if (!process.isAlive()) {
      ProcessReaper.forget(process.toHandle());
    }
  }

  /** Name, pid and the last lines of stdout and stderr, for assertion messages. */
  @Override
  public String toString() {
    return name + " (pid " + pid() + (process.isAlive() ? "" : ", exited " + process.exitValue()) + "); stdout: "
        + tail(stdout()) + "; stderr: " + tail(stderr());
  }

  private static String tail(List<String> lines) {
    return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
  }

  private static List<String> lines(Path file) {
    try {
      return Files.exists(file) ? Files.readAllLines(file, StandardCharsets.UTF_8) : List.of();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private static void createParent(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
  }
}
