package dev.muster.bench.report;

import dev.muster.testing.EtcdBinary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The machine line printed above every table and into the CSV: CPU, cores, memory, OS, Java, etcd. */
public final class Machine {
  private Machine() {}

  public static String describe() {
    return cpu() + ", " + Runtime.getRuntime().availableProcessors() + " cores, " + memory() + ", "
        + System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch")
        + ", " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version") + ", "
        + etcd();
  }

  private static String cpu() {
    return firstLine(Path.of("/proc/cpuinfo"), "model name").map(l -> l.substring(l.indexOf(':') + 1).trim())
        .orElse("unknown CPU");
  }

  private static String memory() {
    return firstLine(Path.of("/proc/meminfo"), "MemTotal").map(l -> {
      long kb = Long.parseLong(l.replaceAll("\\D", ""));
      return String.format("%.1f GiB RAM", kb / 1024.0 / 1024.0);
    }).orElse("unknown RAM");
  }

  private static java.util.Optional<String> firstLine(Path file, String prefix) {
    try {
      return Files.readAllLines(file).stream().filter(l -> l.startsWith(prefix)).findFirst();
    } catch (IOException | RuntimeException e) {
      return java.util.Optional.empty();
    }
  }

  /** The etcd the bench starts, {@code etcd 3.5.30}: in the header and in the machine line of every report. */
  public static String etcd() {
    return EtcdBinary.version().map(v -> "etcd " + v).orElse("etcd unknown");
  }
}
