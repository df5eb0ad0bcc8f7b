package dev.muster.testing.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The machine's load, as a line for a failed test's output: was the machine or etcd the slow one? */
public final class LoadAverage {
  private static final Path PROC = Path.of("/proc/loadavg");

  private LoadAverage() {}

  /**
   * {@code load average 7.91 5.02 3.10 over 1, 5 and 15 min, 9/812 threads runnable, 2 processors}, from {@code
   * /proc/loadavg}; {@code unknown} where there is no such file.
   */
  public static String read() {
    int processors = Runtime.getRuntime().availableProcessors();
    try {
      String[] f = Files.readString(PROC).trim().split("\\s+");
      return "load average " + f[0] + " " + f[1] + " " + f[2] + " over 1, 5 and 15 min, " + f[3]
          + " threads runnable, " + processors + " processors";
    } catch (IOException | RuntimeException e) {
      return "load average unknown (" + PROC + ": " + e.getMessage() + "), " + processors + " processors";
    }
  }
}
