package dev.muster.cli;

import java.io.BufferedOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.function.ToLongFunction;

/**
 * Writes a snapshot so that FILE is either the whole new snapshot or what it was before: the bytes go to {@code
 * FILE.tmp} in the same directory (so the rename stays on one file system), are fsynced, their SHA-256 goes to
 * {@code FILE.sha256.tmp}, and only then are both renamed into place and the directory fsynced. Without {@code
 * force} FILE is placed by a hard link, which fails rather than replace a file that appeared meanwhile. Any
 * failure removes the temporary files and leaves FILE and FILE.sha256 as they were. Stateless.
 */
final class SnapshotFile {
  private static final long PROGRESS_NANOS = 5_000_000_000L;

  /** A snapshot written: where, how many bytes, their SHA-256 in hex. */
  record Saved(Path file, long bytes, String sha256) {}

  private SnapshotFile() {}

  /**
   * Checks before anything is fetched that {@code target} can be written: not a directory, in a writable
   * directory, and new unless {@code force}. A {@link Errors.UsageException} (exit 2) naming the problem.
   */
  static void checkTarget(Path target, boolean force) {
    if (Files.isDirectory(target)) {
      throw new Errors.UsageException(target + " is a directory: give the snapshot's file name, e.g. "
          + target.resolve("etcd.snapshot"));
    }
    if (Files.exists(target) && !force) {
      throw new Errors.UsageException(target + " exists: choose another name, or --force to replace it");
    }
    Path dir = directory(target);
    if (!Files.isDirectory(dir)) {
      throw new Errors.UsageException("cannot write " + target + ": directory " + dir + " does not exist");
    }
    if (!Files.isWritable(dir)) {
      throw new Errors.UsageException("cannot write " + target + ": directory " + dir + " is not writable");
    }
  }

  /**
   * Writes what {@code source} streams (it returns the bytes it wrote) to {@code target}, with its checksum file;
   * reports bytes so far on {@code progress} every 5 s of a long write.
   */
  static Saved write(Path target, boolean force, PrintWriter progress, ToLongFunction<OutputStream> source) {
    checkTarget(target, force);
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    Path sums = Sha256File.beside(target);
    Path sumsTmp = sums.resolveSibling(sums.getFileName() + ".tmp");
    try {
      MessageDigest digest = Sha256File.digest();
      long bytes;
      try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        Progress counted = new Progress(Channels.newOutputStream(channel), progress);
        try (OutputStream out = new DigestOutputStream(new BufferedOutputStream(counted, 64 * 1024), digest)) {
          bytes = source.applyAsLong(out);
          out.flush();
          channel.force(true);
        }
      }
      String sha256 = HexFormat.of().formatHex(digest.digest());
      writeSynced(sumsTmp, Sha256File.line(sha256, target.getFileName().toString()));
      place(tmp, target, force);
      Files.move(sumsTmp, sums, StandardCopyOption.ATOMIC_MOVE);
      syncDirectory(directory(target));
      return new Saved(target, bytes, sha256);
    } catch (IOException e) {
      throw new Errors.UsageException("cannot write " + target + ": " + e.getMessage());
    } finally {
      deleteQuietly(tmp);
      deleteQuietly(sumsTmp);
    }
  }

  private static void place(Path tmp, Path target, boolean force) throws IOException {
    if (force) {
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      return;
    }
    try {
      Files.createLink(target, tmp);
    } catch (FileAlreadyExistsException e) {
      throw new Errors.UsageException(target + " appeared while the snapshot was written: choose another name, or"
          + " --force to replace it");
    }
  }

  private static void writeSynced(Path file, String text) throws IOException {
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING)) {
      channel.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
      channel.force(true);
    }
  }

  /** So that the renames survive a power cut, not only the bytes (Linux lets a directory be opened and synced). */
  private static void syncDirectory(Path dir) throws IOException {
    try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
      channel.force(true);
    }
  }

  private static Path directory(Path target) {
    Path parent = target.toAbsolutePath().getParent();
    return parent == null ? Path.of("/") : parent;
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove the temporary file " + file + ": " + e.getMessage(), e);
    }
  }

  /** Counts bytes and says how many so far every 5 s; only the writing thread touches it. */
  private static final class Progress extends FilterOutputStream {
    private final PrintWriter progress;
    private long bytes;
    private long lastReport = System.nanoTime();

    Progress(OutputStream out, PrintWriter progress) {
      super(out);
      this.progress = progress;
    }

    @Override
    public void write(int b) throws IOException {
      out.write(b);
      counted(1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      out.write(b, off, len);
      counted(len);
    }

    private void counted(int n) {
      bytes += n;
      long now = System.nanoTime();
      if (now - lastReport >= PROGRESS_NANOS) {
        lastReport = now;
        progress.println("muster: snapshot: " + bytes + " bytes so far");
        progress.flush();
      }
    }
  }
}
