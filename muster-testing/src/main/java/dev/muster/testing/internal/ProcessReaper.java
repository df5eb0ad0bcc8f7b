package dev.muster.testing.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The one place that remembers every process and temporary directory the launcher created in this JVM,
 * so that a JVM shutdown (normal exit, SIGTERM, Ctrl-C) kills what is still alive, and its descendants, by pid,
 * and removes what is still on disk.
 *
 * <p>With the system property {@value ProcessRecord#PROPERTY} set to a directory (the build sets it for every test
 * JVM), it also writes down each process it starts, and each one the shutdown hook finds still alive (a leak: the
 * code that started it never stopped it), in that directory's {@link ProcessRecord}, so that a check after all the
 * test JVMs of a module have ended can tell whether any of them left a process to the hook or behind.
 *
 * <p>Thread-safe: all state is in concurrent collections; the shutdown hook is installed once.
 */
public final class ProcessReaper {
  private static final Set<Long> EVER_STARTED = ConcurrentHashMap.newKeySet();
  private static final Set<ProcessHandle> LIVE = ConcurrentHashMap.newKeySet();
  private static final List<Path> TEMP_DIRS = new CopyOnWriteArrayList<>();
  private static final ProcessRecord RECORD = ProcessRecord.fromSystemProperty();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(ProcessReaper::reapAll, "muster-process-reaper"));
  }

  private ProcessReaper() {}

  /** Tracks {@code process} until {@link #forget(ProcessHandle)} or JVM shutdown. */
  public static void track(ProcessHandle process) {
    EVER_STARTED.add(process.pid());
    LIVE.add(process);
    if (RECORD != null) {
      RECORD.started(process);
    }
  }

  /** Stops tracking a process that has exited. */
  public static void forget(ProcessHandle process) {
    LIVE.remove(process);
  }

  /** Registers a directory to delete on JVM shutdown unless {@link #deleted(Path)} is called first. */
  public static void trackTempDir(Path dir) {
    TEMP_DIRS.add(dir);
  }

  /** Deletes {@code dir} and everything below it now, and stops tracking it. */
  public static void deleted(Path dir) {
    deleteRecursively(dir);
    TEMP_DIRS.remove(dir);
  }

  /** Every pid this JVM's launcher has started, alive or not. */
  public static Set<Long> everStarted() {
    return Set.copyOf(EVER_STARTED);
  }

  /** Pids started by this JVM's launcher that are still alive right now. */
  public static Set<Long> stillAlive() {
    var alive = ConcurrentHashMap.<Long>newKeySet();
    for (long pid : EVER_STARTED) {
      ProcessHandle.of(pid).filter(ProcessHandle::isAlive).ifPresent(h -> alive.add(pid));
    }
    return Set.copyOf(alive);
  }

  private static void reapAll() {
    if (RECORD != null) {
      LIVE.stream().filter(ProcessHandle::isAlive).forEach(RECORD::leaked);
    }
    for (ProcessHandle p : LIVE) {
      p.descendants().forEach(ProcessHandle::destroyForcibly); // before the parent, while they are its descendants
      p.destroyForcibly();
    }
    for (ProcessHandle p : LIVE) {
      try {
        p.onExit().get(5, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // stop waiting: the SIGKILLs are sent, the temp dirs still go below
        break;
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        // Shutting down: nothing more we can do than the SIGKILL already sent.
      }
    }
    for (Path dir : TEMP_DIRS) {
      try {
        deleteRecursively(dir);
      } catch (UncheckedIOException e) {
        // Best effort at shutdown.
      }
    }
  }

  /** Deletes a directory tree; a missing directory is not an error. */
  public static void deleteRecursively(Path dir) {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(dir, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
          Files.deleteIfExists(file);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
          Files.deleteIfExists(d);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      throw new UncheckedIOException("could not delete " + dir + ": " + e.getMessage(), e);
    }
  }
}
