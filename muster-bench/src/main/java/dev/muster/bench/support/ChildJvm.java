package dev.muster.bench.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.muster.testing.internal.ProcessReaper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A JVM the bench started from its own jar ({@code java -cp muster-bench.jar MAIN ARGS}): a provider that a
 * measurement kills with SIGKILL, or the ZooKeeper server. Its stdout goes to {@code NAME.out} (the providers
 * write JSON lines there), stderr to {@code NAME.err}.
 *
 * <p>Every child is tracked by pid in muster-testing's reaper, so it is killed on {@link #close()}, and on JVM
 * exit (Ctrl-C) even if the bench never reaches its cleanup. Never killed by name. Thread-safe.
 */
public final class ChildJvm implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Client compiler and serial GC: child JVMs start faster on two cores (same flags as the lab's). */
  private static final List<String> JVM_FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m");

  private final String name;
  private final Process process;
  private final Path out;
  private final Path err;

  private ChildJvm(String name, Process process, Path out, Path err) {
    this.name = name;
    this.process = process;
    this.out = out;
    this.err = err;
  }

  /** Starts {@code mainClass} with {@code args} from the jar (or class path) this JVM runs from. */
  public static ChildJvm start(Path dir, String name, String mainClass, List<String> args) {
    return start(dir, name, JVM_FLAGS, mainClass, args);
  }

  /**
   * As {@link #start(Path, String, String, List)}, with {@code jvmFlags} instead of the fast-start flags: for a
   * long-lived child whose steady-state speed is measured (the ZooKeeper server wants the full JIT).
   */
  public static ChildJvm start(Path dir, String name, List<String> jvmFlags, String mainClass, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmFlags);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    command.addAll(args);
    Path out = dir.resolve(name + ".out");
    Path err = dir.resolve(name + ".err");
    try {
      Files.createDirectories(dir);
      Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      ProcessReaper.track(p.toHandle());
      return new ChildJvm(name, p, out, err);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + " (" + String.join(" ", command) + "): "
          + e.getMessage(), e);
    }
  }

  public String name() {
    return name;
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** The exit code once the process has exited; empty while it runs. */
  public java.util.OptionalInt exitCode() {
    return process.isAlive() ? java.util.OptionalInt.empty() : java.util.OptionalInt.of(process.exitValue());
  }

  /** SIGKILL by pid, then waits (up to 5 s) until the process is gone. */
  public void kill9() {
    process.destroyForcibly();
    awaitExit(Duration.ofSeconds(5));
    ProcessReaper.forget(process.toHandle());
  }

  /** True once the process has exited within {@code limit}. */
  public boolean awaitExit(Duration limit) {
    try {
      return process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The JSON lines written to stdout so far (lines that are not JSON are skipped). */
  public List<JsonNode> jsonLines() {
    List<JsonNode> lines = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(out)) {
        if (line.startsWith("{")) {
          try {
            lines.add(JSON.readTree(line));
          } catch (IOException partial) {
            // the last line may still be being written
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + out + ": " + e.getMessage(), e);
    }
    return lines;
  }

  /** The first JSON line whose {@code "event"} is {@code event}, if written yet. */
  public java.util.Optional<JsonNode> firstEvent(String event) {
    return jsonLines().stream().filter(n -> event.equals(n.path("event").asText())).findFirst();
  }

  /** The last lines of stderr, for an error message. */
  public String errTail() {
    try {
      List<String> lines = Files.exists(err) ? Files.readAllLines(err) : List.of();
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + err + ")";
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill9();
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
