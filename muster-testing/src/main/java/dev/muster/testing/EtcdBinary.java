package dev.muster.testing;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds the etcd server binaries the tests, the lab and the bench start. Two are known:
 * <ul>
 *   <li>the <b>default</b> ({@link #locate()}): {@code $MUSTER_ETCD_BIN} (or the system property
 *       {@code muster.etcd.bin}) when set; else the project's cache, {@code .cache/etcd/default/usr/bin/etcd} under
 *       {@code $MUSTER_ETCD_CACHE} (or {@code muster.etcd.cache}, which the build sets), where {@code ./muster} puts
 *       etcd 3.5; else {@code etcd} on {@code PATH};</li>
 *   <li>the <b>old</b> line still proven ({@link #locateOld()}), Debian stable's 3.4.23: {@code $MUSTER_ETCD_OLD_BIN}
 *       ({@code muster.etcd.old.bin}), else {@code .cache/etcd/old/usr/bin/etcd} ({@code ./muster etcd-install 3.4}).
 *   </li>
 * </ul>
 * Stateless but for a cache of what each binary said its version was; thread-safe.
 */
public final class EtcdBinary {
  /** The environment variable that names the etcd binary to use. */
  public static final String ENV = "MUSTER_ETCD_BIN";
  /** The environment variable that names the older etcd (3.4) for compatibility runs and the rolling upgrade. */
  public static final String OLD_ENV = "MUSTER_ETCD_OLD_BIN";
  /** The environment variable that names the project's etcd cache ({@code .cache/etcd}). */
  public static final String CACHE_ENV = "MUSTER_ETCD_CACHE";

  private static final Map<Path, Optional<EtcdVersion>> VERSIONS = new ConcurrentHashMap<>();

  private EtcdBinary() {}

  /** The etcd binary to run, or an {@link EtcdLaunchException} saying how to install or name one. */
  public static Path locate() {
    Optional<Path> configured = configured("muster.etcd.bin", ENV);
    if (configured.isPresent()) {
      return configured.get();
    }
    return cached("default")
        .or(() -> Executables.find("etcd"))
        .orElseThrow(() -> new EtcdLaunchException("etcd is not installed: run './muster etcd-install' (etcd 3.5"
            + " into the project's .cache/etcd), or set " + ENV + " to an etcd binary"));
  }

  /**
   * The older etcd line Muster still proves (3.4.23), or empty when none is configured or cached: the tests that
   * guard version-specific behaviour run on it too, and the rolling upgrade starts from it.
   */
  public static Optional<Path> locateOld() {
    return configured("muster.etcd.old.bin", OLD_ENV).or(() -> cached("old"));
  }

  /**
   * The version of the binary {@link #locate()} finds, e.g. {@code 3.5.30}, from its {@code --version}; empty when
   * there is none or it does not say within 10 s. For reports of what figures were measured on.
   */
  public static Optional<String> version() {
    try {
      return version(locate()).map(EtcdVersion::toString);
    } catch (EtcdLaunchException e) {
      return Optional.empty();
    }
  }

  /** What {@code binary --version} says it is; empty when it does not say within 10 s. Asked once per binary. */
  public static Optional<EtcdVersion> version(Path binary) {
    return VERSIONS.computeIfAbsent(binary.toAbsolutePath().normalize(), EtcdBinary::ask);
  }

  /**
   * The version of the etcd the tests start ({@link #locate()}), for behaviour that differs between lines; an
   * {@link EtcdLaunchException} when there is none or it does not say.
   */
  public static EtcdVersion runningVersion() {
    Path bin = locate();
    return version(bin).orElseThrow(() -> new EtcdLaunchException(bin + " --version did not print"
        + " 'etcd Version: X.Y.Z' within 10 s: is it an etcd server binary?"));
  }

  private static Optional<Path> configured(String property, String env) {
    String configured = Optional.ofNullable(System.getProperty(property)).orElse(System.getenv(env));
    if (configured == null || configured.isBlank()) {
      return Optional.empty();
    }
    Path p = Path.of(configured);
    if (!Files.isExecutable(p) || Files.isDirectory(p)) {
      throw new EtcdLaunchException(env + "=" + configured + " is not an executable file: point it at an etcd"
          + " server binary, or unset it to use the project's .cache/etcd (./muster etcd-install)");
    }
    return Optional.of(p);
  }

  private static Optional<Path> cached(String link) {
    String dir = Optional.ofNullable(System.getProperty("muster.etcd.cache")).orElse(System.getenv(CACHE_ENV));
    if (dir == null || dir.isBlank()) {
      return Optional.empty();
    }
    Path bin = Path.of(dir, link, "usr", "bin", "etcd");
    return Files.isExecutable(bin) ? Optional.of(bin) : Optional.empty();
  }

  private static Optional<EtcdVersion> ask(Path bin) {
    try (ChildProcess p = ChildProcess.start("etcd-version", List.of(bin.toString(), "--version"))) {
      if (!p.awaitExit(Duration.ofSeconds(10))) {
        return Optional.empty();
      }
      return p.stdout().stream().filter(l -> l.startsWith("etcd Version:"))
          .map(l -> EtcdVersion.parse(l.substring(l.indexOf(':') + 1))).findFirst();
    } catch (UncheckedIOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
