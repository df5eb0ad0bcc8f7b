package dev.muster.testing.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A directory in which every test JVM of a module writes down the processes it started ({@code <jvm pid>.started})
 * and those its shutdown hook had to kill ({@code <jvm pid>.leaked}), one line each: {@code pid start-epoch-millis
 * command}. The JVMs run side by side, so no one of them can check the others' processes; the module's leak check
 * reads the directory after they have all ended ({@code LeakCheck.recorded()}).
 *
 * <p>A process is identified by its pid and its start time together, so a pid the system has handed to another
 * process since is not taken for ours.
 *
 * <p>Thread-safe: each line is one append of a few dozen bytes to a file of this JVM's own.
 */
public final class ProcessRecord {
  /** The system property naming the directory. */
  public static final String PROPERTY = "muster.process.record";

  private final Path dir;
  private final long self = ProcessHandle.current().pid();

  ProcessRecord(Path dir) {
    this.dir = dir;
  }

  /** The record the build asked for, or null when the property is not set. */
  static ProcessRecord fromSystemProperty() {
    String dir = System.getProperty(PROPERTY);
    return dir == null || dir.isBlank() ? null : new ProcessRecord(Path.of(dir));
  }

  /** One process, as written down. */
  public record Entry(long pid, long startMillis, String command) {
    /** Whether that very process (same pid, same start) is alive now. */
    public boolean alive() {
      return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
          .flatMap(h -> h.info().startInstant()).map(Instant::toEpochMilli)
          .filter(start -> startMillis == 0 || Math.abs(start - startMillis) < 1_000).isPresent();
    }

    @Override
    public String toString() {
      return "pid " + pid + " (" + command + ")";
    }
  }

  void started(ProcessHandle p) {
    append(self + ".started", p);
  }

  void leaked(ProcessHandle p) {
    append(self + ".leaked", p);
  }

  /** Every process written down as started in {@code dir}, by any JVM. */
  public static List<Entry> started(Path dir) {
    return read(dir, ".started");
  }

  /** Every process a JVM's shutdown hook found still alive and killed. */
  public static List<Entry> leaked(Path dir) {
    return read(dir, ".leaked");
  }

  private void append(String file, ProcessHandle p) {
    long start = p.info().startInstant().map(Instant::toEpochMilli).orElse(0L);
    String command = p.info().command().map(c -> Path.of(c).getFileName().toString()).orElse("?");
    String line = p.pid() + " " + start + " " + command + "\n";
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve(file), line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write down pid " + p.pid() + " in " + dir + ": " + e.getMessage(), e);
    }
  }

  private static List<Entry> read(Path dir, String suffix) {
    List<Entry> entries = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return entries;
    }
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(f -> f.getFileName().toString().endsWith(suffix)).sorted().toList()) {
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          parse(line).ifPresent(entries::add);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the process record in " + dir + ": " + e.getMessage(), e);
    }
    return entries;
  }

  private static Optional<Entry> parse(String line) {
    String[] parts = line.strip().split(" ", 3);
    if (parts.length < 2) {
      return Optional.empty();
    }
    try {
      return Optional.of(new Entry(Long.parseLong(parts[0]), Long.parseLong(parts[1]),
          parts.length > 2 ? parts[2] : "?"));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
