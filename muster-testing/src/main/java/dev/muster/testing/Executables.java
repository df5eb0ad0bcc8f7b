package dev.muster.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds the tools the tests, the lab and the bench run (etcd, dig, dnsperf): the first executable file of that name
 * on {@code PATH}, then in the system directories a root shell would have there. Stateless.
 */
public final class Executables {
  private static final List<Path> SYSTEM = List.of(Path.of("/usr/local/bin"), Path.of("/usr/bin"),
      Path.of("/usr/sbin"));

  private Executables() {}

  /** {@code name} on {@code PATH}, else in /usr/local/bin, /usr/bin or /usr/sbin; empty when none is executable. */
  public static Optional<Path> find(String name) {
    List<Path> dirs = new ArrayList<>();
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(File.pathSeparator)) {
        if (!dir.isEmpty()) {
          dirs.add(Path.of(dir));
        }
      }
    }
    dirs.addAll(SYSTEM);
    return find(name, dirs);
  }

  /** The first executable regular file {@code name} in {@code dirs}, in their order. */
  public static Optional<Path> find(String name, List<Path> dirs) {
    return dirs.stream().map(d -> d.resolve(name)).filter(p -> Files.isRegularFile(p) && Files.isExecutable(p))
        .findFirst();
  }
}
