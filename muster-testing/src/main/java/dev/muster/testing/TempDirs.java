package dev.muster.testing;

import dev.muster.testing.internal.ProcessReaper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Temporary directories for what a child process writes (a ZooKeeper server's data), deleted by {@link #delete}
 * or, if that is never reached, when this JVM exits, like etcd members' data directories. Thread-safe.
 */
public final class TempDirs {
  private TempDirs() {}

  /** A new directory under {@code parent} (created if missing), named {@code prefix} and a random suffix. */
  public static Path create(Path parent, String prefix) {
    try {
      Files.createDirectories(parent);
      Path dir = Files.createTempDirectory(parent, prefix);
      ProcessReaper.trackTempDir(dir);
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a directory " + prefix + "* under " + parent + ": "
          + e.getMessage(), e);
    }
  }

  /** A new directory under the system's temporary directory, removed when this JVM exits (test certificates). */
  public static Path create(String prefix) {
    return create(Path.of(System.getProperty("java.io.tmpdir")), prefix);
  }

  /** Deletes {@code dir} and everything below it now; an {@link UncheckedIOException} if that fails. */
  public static void delete(Path dir) {
    ProcessReaper.deleted(dir);
  }
}
