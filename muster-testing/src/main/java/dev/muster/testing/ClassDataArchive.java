package dev.muster.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A class-data-sharing archive (JDK 17's dynamic AppCDS) for a jar that tests and the lab start many times, so each
 * of those JVMs maps the jar's classes already parsed and verified instead of loading them again: measured on this
 * 2-core machine, a {@code muster ls} against etcd took 1.3 CPU-seconds without it and 0.8 with it (0.64 s to the
 * exit instead of 1.38 s). Nothing a test checks depends on it; only how much CPU a dozen short-lived JVMs take from
 * the etcd processes and the test JVMs beside them.
 *
 * <p>The archive is {@code JAR.jsa} beside the jar, made once by a training run of the jar ({@code
 * -XX:ArchiveClassesAtExit}) and made again when the jar is newer. JVMs running side by side (the build's parallel
 * forks) make it under a file lock, one at a time; the others wait and use it. When it cannot be made (the training
 * run failed, a read-only directory), {@link #flags} returns no flags and the JVMs start as before.
 *
 * <p>Thread-safe: {@link #flags} is synchronized in this JVM and serialized across JVMs by the lock file.
 */
public final class ClassDataArchive {
  private static final Duration TRAINING_LIMIT = Duration.ofSeconds(60);

  private ClassDataArchive() {}

  /**
   * The JVM flags that map {@code jar}'s archive, making it first when it is missing or older than the jar by running
   * {@code java jvmFlags -jar jar trainingArgs} (a command that loads most of the classes the real runs load and exits
   * by itself); no flags when there is no archive to use.
   */
  public static synchronized List<String> flags(Path jar, List<String> jvmFlags, List<String> trainingArgs) {
    Path archive = jar.resolveSibling(jar.getFileName() + ".jsa");
    try {
      if (!fresh(archive, jar)) {
        make(archive, jar, jvmFlags, trainingArgs);
      }
    } catch (IOException | UncheckedIOException e) {
      return List.of();
    }
    if (!fresh(archive, jar)) {
      return List.of();
    }
    // A valid archive logs nothing; these keep a mismatch warning off stdout, which the tests read as JSON lines.
    return List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off");
  }

  private static boolean fresh(Path archive, Path jar) {
    try {
      return Files.isRegularFile(archive) && Files.size(archive) > 0
          && !Files.getLastModifiedTime(archive).toInstant().isBefore(Files.getLastModifiedTime(jar).toInstant());
    } catch (IOException e) {
      return false;
    }
  }

  private static void make(Path archive, Path jar, List<String> jvmFlags, List<String> trainingArgs)
      throws IOException {
    Path lockFile = archive.resolveSibling(archive.getFileName() + ".lock");
    try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
         FileLock ignored = channel.lock()) {
      if (fresh(archive, jar)) {
        return; // another JVM made it while this one waited
      }
      Path partial = archive.resolveSibling(archive.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
      Files.deleteIfExists(partial);
      List<String> flags = new ArrayList<>(jvmFlags);
      flags.add("-XX:ArchiveClassesAtExit=" + partial);
      List<String> rest = new ArrayList<>(List.of("-jar", jar.toString()));
      rest.addAll(trainingArgs);
      try (ChildProcess training = ChildProcess.start("cds-training", ChildProcess.javaCommand(flags, rest))) {
        if (!training.awaitExit(TRAINING_LIMIT)) {
          throw new IOException("the training run of " + jar + " did not exit within " + TRAINING_LIMIT.toSeconds()
              + " s");
        }
      }
      if (Files.isRegularFile(partial) && Files.size(partial) > 0) {
        Files.move(partial, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } else {
        Files.deleteIfExists(partial);
      }
    }
  }
}
