package dev.muster.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The real {@code muster.jar} run as a separate {@code java -jar} process, for the ITs: its stdout and stderr are
 * collected line by line on two reader threads, signals are sent by pid with {@code kill}, and {@link #close()}
 * kills it (SIGKILL, by pid) so a failed assertion never leaves a process behind.
 */
final class CliProcess implements AutoCloseable {
  private static final JsonMapper JSON = JsonMapper.builder().build();
  /** Every process started in this JVM, for {@code NoLeakedProcessesIT}. */
  private static final List<ProcessHandle> STARTED = new CopyOnWriteArrayList<>();

  private final Process process;
  private final List<String> stdout = new CopyOnWriteArrayList<>();
  private final List<String> stderr = new CopyOnWriteArrayList<>();
  private final Thread outReader;
  private final Thread errReader;

  private CliProcess(Process process) {
    this.process = process;
    STARTED.add(process.toHandle());
    this.outReader = reader(process.getInputStream(), stdout, "stdout-" + process.pid());
    this.errReader = reader(process.getErrorStream(), stderr, "stderr-" + process.pid());
  }

  /** Starts {@code java -jar muster.jar ARGS...} with the jar from system property {@code muster.jar}. */
  static CliProcess start(String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-jar");
    command.add(System.getProperty("muster.jar", "target/muster.jar"));
    command.addAll(List.of(args));
    try {
      return new CliProcess(new ProcessBuilder(command).start());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + command, e);
    }
  }

  /** Runs {@code muster ARGS...} to completion (at most {@code limit}) and returns it, exited. */
  static CliProcess run(Duration limit, String... args) throws InterruptedException {
    CliProcess p = start(args);
    p.awaitExit(limit);
    return p;
  }

  /** Pids of the processes this JVM started that are still alive. */
  static List<Long> stillAlive() {
    return STARTED.stream().filter(ProcessHandle::isAlive).map(ProcessHandle::pid).toList();
  }

  static int everStarted() {
    return STARTED.size();
  }

  long pid() {
    return process.pid();
  }

  Process process() {
    return process;
  }

  List<String> stdout() {
    return List.copyOf(stdout);
  }

  List<String> stderr() {
    return List.copyOf(stderr);
  }

  /** The stdout lines parsed as JSON objects (every line must be one). */
  List<JsonNode> json() {
    List<JsonNode> nodes = new ArrayList<>();
    for (String line : stdout) {
      try {
        nodes.add(JSON.readTree(line));
      } catch (IOException e) {
        throw new AssertionError("stdout line is not JSON: " + line, e);
      }
    }
    return nodes;
  }

  /** The {@code "event"} field of every stdout line, in order. */
  List<String> events() {
    return json().stream().map(n -> n.path("event").asText()).toList();
  }

  /** Sends a signal by pid, e.g. {@code STOP}, {@code CONT}. */
  void signal(String name) throws IOException, InterruptedException {
    Process kill = new ProcessBuilder("kill", "-s", name, Long.toString(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new IllegalStateException("kill -s " + name + " " + process.pid() + " failed");
    }
  }

  /**
   * SIGTERM, by pid. Not {@link Process#destroy()}: on Unix that also closes our ends of the child's stdout and
   * stderr, so the lines the shutdown hook prints ({@code draining}, {@code revoked}) would be lost. The
   * {@link ProcessHandle} sends the same signal and leaves the streams open.
   */
  void terminate() {
    process.toHandle().destroy();
  }

  /** Waits for the exit and for both streams to be read to the end; returns the exit status. */
  int awaitExit(Duration limit) throws InterruptedException {
    if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("muster (pid " + pid() + ") still running after " + limit + "; stdout " + stdout
          + ", stderr " + stderr);
    }
    outReader.join(5_000);
    errReader.join(5_000);
    return process.exitValue();
  }

  @Override
  public void close() {
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "muster pid " + pid() + " stdout " + stdout + " stderr " + stderr;
  }

  private static Thread reader(InputStream in, List<String> lines, String name) {
    Thread t = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          lines.add(line);
        }
      } catch (IOException e) {
        // the process was killed; what was read is kept
      }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }
}
