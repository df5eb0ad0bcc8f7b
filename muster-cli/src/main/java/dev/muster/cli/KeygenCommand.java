package dev.muster.cli;

import dev.muster.InvalidInputException;
import dev.muster.sign.SigningKey;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster keygen --out PATH}: a new Ed25519 key pair for signed instance records, {@code PATH.key} (the
 * private key, PKCS#8 PEM, created with mode 0600) for {@code register --sign-key} and {@code PATH.pub} (X.509 PEM)
 * for {@code watch}/{@code call --trust-key}. Prints the key id first. Never overwrites: if either file exists,
 * nothing is written and it exits 2.
 */
@Command(
    name = "keygen",
    mixinStandardHelpOptions = true,
    description = {
        "Make an Ed25519 key pair for signing instance records: PATH.key (private, mode 0600) for register"
            + " --sign-key, PATH.pub for watch/call --trust-key.",
        "Prints the key id (the first 16 hex digits of the SHA-256 of the public key). Never overwrites a file."})
final class KeygenCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Option(names = "--out", required = true, paramLabel = "PATH",
      description = "Where to write: PATH.key and PATH.pub, e.g. --out keys/orders-2026.")
  Path out;

  @Override
  public Integer call() {
    Path key = sibling(".key");
    Path pub = sibling(".pub");
    for (Path file : new Path[] {key, pub}) {
      if (Files.exists(file)) {
        throw exists(file);
      }
    }
    Path dir = key.toAbsolutePath().getParent();
    if (dir != null && !Files.isDirectory(dir)) {
      throw new InvalidInputException("--out", out.toString(), "directory " + dir + " does not exist: create it"
          + " first");
    }
    SigningKey signingKey = SigningKey.generate();
    write(key, signingKey.toPem(), true);
    try {
      write(pub, signingKey.trustedKey().toPem(), false);
    } catch (RuntimeException e) {
      delete(key); // no private key without its public half
      throw e;
    }
    PrintWriter stdout = spec.commandLine().getOut();
    stdout.println("key id " + signingKey.keyId());
    stdout.println("wrote " + key + " (private key, mode 0600): muster register --sign-key " + key);
    stdout.println("wrote " + pub + " (public key): muster watch|call --trust-key " + pub);
    stdout.flush();
    return 0;
  }

  private Path sibling(String suffix) {
    if (out.getFileName() == null) {
      throw new InvalidInputException("--out", out.toString(), "give a file name to add .key and .pub to, e.g."
          + " keys/orders");
    }
    return out.resolveSibling(out.getFileName() + suffix);
  }

  /** Creates {@code file} (it must not exist), private ones with mode 0600 from the start, and writes {@code pem}. */
  private void write(Path file, String pem, boolean secret) {
    try {
      if (secret) {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, pem, StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
      } else {
        Files.writeString(file, pem, StandardCharsets.US_ASCII, StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);
      }
    } catch (FileAlreadyExistsException e) {
      throw exists(file);
    } catch (IOException e) {
      throw new InvalidInputException("--out", out.toString(), "cannot write " + file + " ("
          + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + ")");
    }
  }

  private InvalidInputException exists(Path file) {
    return InvalidInputException.withMessage("--out", out.toString(), file + " already exists: keygen never"
        + " overwrites a key; remove it or choose another --out");
  }

  private static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // the error that made us delete it is the one to report
    }
  }
}
