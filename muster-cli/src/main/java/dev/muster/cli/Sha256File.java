package dev.muster.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The checksum file beside a snapshot, {@code FILE.sha256}, in the format of coreutils' {@code sha256sum}: one line
 * {@code HEX  NAME} (two spaces; {@code HEX *NAME}, binary mode, is read too), NAME being the snapshot's file name
 * without its directory, so that {@code cd DIR && sha256sum -c FILE.sha256} checks it as well. Stateless.
 */
final class Sha256File {
  private static final Pattern LINE = Pattern.compile("([0-9a-fA-F]{64}) [ *](.+)");

  /** What a checksum file says: the digest in lower-case hex, and the file name it is for. */
  record Entry(String sha256, String name) {}

  private Sha256File() {}

  /** {@code FILE.sha256} beside {@code snapshot}. */
  static Path beside(Path snapshot) {
    return snapshot.resolveSibling(snapshot.getFileName() + ".sha256");
  }

  /** The one line {@code sha256sum} would print for a file named {@code name} with that digest. */
  static String line(String sha256, String name) {
    return sha256 + "  " + name + "\n";
  }

  /** The entry in {@code content}, the text of {@code file}; a {@link Errors.UsageException} if it holds none. */
  static Entry parse(String content, Path file) {
    String first = content.lines().filter(l -> !l.isBlank()).findFirst().orElse("").strip();
    Matcher m = LINE.matcher(first);
    if (!m.matches()) {
      throw new Errors.UsageException(file + " is not a sha256sum line (HEX  NAME): it reads \""
          + (first.length() > 80 ? first.substring(0, 80) + "..." : first) + "\"");
    }
    return new Entry(m.group(1).toLowerCase(Locale.ROOT), m.group(2));
  }

  /** The entry of {@code snapshot}'s checksum file; empty when there is none. */
  static Optional<Entry> read(Path snapshot) {
    Path file = beside(snapshot);
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      return Optional.of(parse(Files.readString(file), file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /** A new SHA-256 digest. */
  static MessageDigest digest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }

  /** The SHA-256 of {@code file}'s bytes, in lower-case hex. */
  static String of(Path file) {
    MessageDigest digest = digest();
    byte[] buffer = new byte[64 * 1024];
    try (InputStream in = Files.newInputStream(file)) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        digest.update(buffer, 0, n);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
    return HexFormat.of().formatHex(digest.digest());
  }
}
