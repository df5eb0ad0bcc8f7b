package dev.muster.lab.scenarios;

import dev.muster.lab.LabContext;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;

/**
 * One provider's fault file ({@code muster register --serve-hello --hello-fault-file FILE}) in the scenario's
 * directory: the provider reads its first word before each answer ({@code 503}, {@code hang}, {@code health-503};
 * absent: normal). {@link #set} writes a word, {@link #clear} deletes the file; both take effect at the provider's
 * next request, and both are marked in {@code lab.jsonl} ({@code fault} / {@code heal}) for the report.
 */
final class FaultFile {
  private final LabContext ctx;
  private final String provider;
  private final Path file;

  private FaultFile(LabContext ctx, String provider) {
    this.ctx = ctx;
    this.provider = provider;
    this.file = ctx.dir().resolve(provider + ".fault");
  }

  /** {@code DIR/PROVIDER.fault}; nothing is written yet (the provider starts normal). */
  static FaultFile of(LabContext ctx, String provider) {
    return new FaultFile(ctx, provider);
  }

  /** The provider's arguments: {@code --hello-fault-file FILE}. */
  String[] args() {
    return new String[] {"--hello-fault-file", file.toString()};
  }

  /**
   * Puts {@code word} in the file (written aside and moved in, so the provider never reads half a word) and returns
   * when it was in place.
   */
  Instant set(String word) {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      Files.writeString(tmp, word + "\n", StandardCharsets.UTF_8);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
    Instant at = Instant.now();
    ctx.mark("fault", provider + " " + word);
    return at;
  }

  /** Deletes the file (the provider answers normally from its next request) and returns when it was gone. */
  Instant clear() {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + file + ": " + e.getMessage(), e);
    }
    Instant at = Instant.now();
    ctx.mark("heal", provider + " fault file deleted");
    return at;
  }
}
