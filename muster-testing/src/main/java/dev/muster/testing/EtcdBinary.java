package dev.muster.testing;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Finds the etcd server binary: {@code $MUSTER_ETCD_BIN} (or the system property {@code muster.etcd.bin})
 * when set, else {@code etcd} on {@code PATH}. Muster is tested against Debian's {@code etcd-server} 3.4.
 */
public final class EtcdBinary {
  /** The environment variable that names the etcd binary to use. */
  public static final String ENV = "MUSTER_ETCD_BIN";

  private EtcdBinary() {}

  /** The etcd binary to run, or an {@link EtcdLaunchException} saying how to install or name one. */
  public static Path locate() {
    String configured = Optional.ofNullable(System.getProperty("muster.etcd.bin")).orElse(System.getenv(ENV));
    if (configured != null && !configured.isBlank()) {
      Path p = Path.of(configured);
      if (!Files.isExecutable(p)) {
        throw new EtcdLaunchException(ENV + "=" + configured + " is not an executable file: point it at the etcd"
            + " server binary or unset it to use etcd from PATH");
      }
      return p;
    }
    return Executables.find("etcd").orElseThrow(() -> new EtcdLaunchException(
        "etcd is not installed: run 'apt-get install -y etcd-server etcd-client' (or ./muster, which does it"
            + " as root), or set " + ENV + " to an etcd 3.4 binary"));
  }

  /**
   * The version of the binary {@link #locate()} finds, e.g. {@code 3.4.23}, from its {@code --version}; empty when
   * there is none or it does not say within 10 s. For reports of what figures were measured on.
   */
  public static Optional<String> version() {
    Path bin;
    try {
      bin = locate();
    } catch (EtcdLaunchException e) {
      return Optional.empty();
    }
    try (ChildProcess p = ChildProcess.start("etcd-version", List.of(bin.toString(), "--version"))) {
      if (!p.awaitExit(Duration.ofSeconds(10))) {
        return Optional.empty();
      }
      return p.stdout().stream().filter(l -> l.startsWith("etcd Version:"))
          .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst();
    } catch (UncheckedIOException e) {
      return Optional.empty();
    }
  }

}
