package dev.muster.cli;

import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * {@code --trust-key FILE}, repeatable, for the commands that run an endpoint cache ({@code watch}, {@code call},
 * {@code grpc call}, {@code dns}, {@code console}):
 * serve only records signed by one of these keys. A picocli mixin; confined to the thread that runs the command.
 */
final class TrustKeyOptions {
  @Option(names = "--trust-key", paramLabel = "FILE",
      description = "Serve only instance records signed by this Ed25519 public key (PEM, e.g. NAME.pub from muster"
          + " keygen); records that are unsigned, tampered or signed by another key are excluded and counted."
          + " Repeat to trust several keys at once (while providers rotate keys). Default: records are not"
          + " checked.")
  List<Path> files = new ArrayList<>();

  /**
   * The keys trusted for {@code service} of {@code namespace}, or {@link TrustedKeys#NONE} without the flag.
   *
   * @throws dev.muster.InvalidInputException (exit 2) naming a file that is missing, unreadable or not an Ed25519
   *     public key
   */
  TrustedKeys trustedKeys(String namespace, String service) {
    if (files.isEmpty()) {
      return TrustedKeys.NONE;
    }
    return TrustedKeys.builder().service(namespace, service, keys()).build();
  }

  /** The keys read from the files (none without the flag); a bad file is an InvalidInputException (exit 2). */
  List<TrustedKey> keys() {
    return files.stream().map(TrustedKey::read).toList();
  }
}
