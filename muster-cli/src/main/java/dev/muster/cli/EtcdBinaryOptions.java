package dev.muster.cli;

import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdLaunchException;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --etcd-bin}: which etcd server binary a command that starts its own etcd runs (lab, chaos, etcd, sim ttl
 * --validate, snapshot verify). A picocli mixin that sets muster-testing's system property, so everything the
 * command starts in this JVM uses it; confined to the thread that parses the command.
 */
final class EtcdBinaryOptions {
  @Option(names = "--etcd-bin", paramLabel = "FILE",
      description = "The etcd server binary to start (default: $MUSTER_ETCD_BIN; else the project's"
          + " .cache/etcd/default, etcd 3.5, which ./muster fetches; else etcd on PATH).")
  void etcdBin(Path binary) {
    System.setProperty("muster.etcd.bin", checked(binary, "--etcd-bin").toString());
  }

  /** An executable file, or a usage error naming the option and what to do. */
  static Path checked(Path binary, String option) {
    if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
      throw new Errors.UsageException(option + " " + binary + " is not an executable file: give the etcd server"
          + " binary (./muster etcd-install prints where the project's are)");
    }
    return binary.toAbsolutePath();
  }

  /** What the command will start, for its header: {@code etcd 3.5.30 (/path/to/etcd)}. */
  static String describe() {
    try {
      Path bin = EtcdBinary.locate();
      return "etcd " + EtcdBinary.version(bin).map(Object::toString).orElse("of unknown version") + " (" + bin + ")";
    } catch (EtcdLaunchException e) {
      throw new Errors.UsageException(e.getMessage());
    }
  }
}
