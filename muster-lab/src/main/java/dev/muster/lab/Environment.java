package dev.muster.lab;

import dev.muster.testing.EtcdBinary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@code env.txt}: what the figures were measured on. */
final class Environment {
  private Environment() {}

  static String describe() {
    StringBuilder sb = new StringBuilder();
    sb.append("etcd: ").append(EtcdBinary.version().map(v -> "etcd Version: " + v).orElse("unknown"))
        .append(binary(EtcdBinary::locate)).append('\n');
    sb.append("etcd, older line (rolling_upgrade starts on it): ")
        .append(EtcdBinary.locateOld().flatMap(EtcdBinary::version).map(v -> "etcd Version: " + v).orElse("none"))
        .append(EtcdBinary.locateOld().map(p -> " (" + p + ")").orElse("")).append('\n');
    sb.append("java: ").append(System.getProperty("java.vm.name")).append(' ')
        .append(System.getProperty("java.runtime.version")).append('\n');
    sb.append("os: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
        .append(' ').append(System.getProperty("os.arch")).append('\n');
    sb.append("cores: ").append(Runtime.getRuntime().availableProcessors()).append('\n');
    sb.append("memory: ").append(memory()).append('\n');
    sb.append("cpu: ").append(cpu()).append('\n');
    return sb.toString();
  }

  private static String binary(java.util.function.Supplier<Path> locate) {
    try {
      return " (" + locate.get() + ")";
    } catch (RuntimeException e) {
      return "";
    }
  }

  private static String memory() {
    try {
      return Files.readAllLines(Path.of("/proc/meminfo")).stream().filter(l -> l.startsWith("MemTotal"))
          .findFirst().map(l -> l.replaceAll("\\s+", " ")).orElse("unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }

  private static String cpu() {
    try {
      return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
          .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
