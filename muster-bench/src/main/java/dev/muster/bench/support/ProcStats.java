package dev.muster.bench.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * Another process's CPU time and memory from Linux's {@code /proc/PID/stat} and {@code /proc/PID/status}: how the
 * bench reads what etcd (or its gRPC proxy) spent. A reading of a process that has gone is empty, not an error.
 */
public final class ProcStats {
  /** /proc reports times in USER_HZ ticks: 100 a second on Linux on x86 and ARM. */
  private static final double TICKS_PER_SECOND = 100;

  private ProcStats() {}

  /** utime + stime of {@code pid}, in seconds; NaN once the process is gone or off Linux. */
  public static double cpuSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" "); // f[0] is field 3 (state)
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** Resident memory now ({@code VmRSS}), in bytes. */
  public static OptionalLong rssBytes(long pid) {
    return statusKb(pid, "VmRSS:");
  }

  /** The most resident memory the process ever had ({@code VmHWM}, its high-water mark), in bytes. */
  public static OptionalLong peakRssBytes(long pid) {
    return statusKb(pid, "VmHWM:");
  }

  private static OptionalLong statusKb(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field)) {
          String kb = line.substring(field.length()).trim().split("\\s+")[0];
          return OptionalLong.of(Long.parseLong(kb) * 1024);
        }
      }
      return OptionalLong.empty();
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * Samples a process's CPU every {@code periodMillis} on a daemon thread until closed, and keeps the busiest
   * one-second window seen: the peak of a storm, which an average over the run would hide.
   *
   * <p>Thread-safe: the sampling thread writes, {@link #peakCores()} reads.
   */
  public static final class PeakCpu implements AutoCloseable {
    private final long pid;
    private final Thread thread;
    private volatile double peak = Double.NaN;
    private volatile boolean stop;

    public PeakCpu(long pid, long periodMillis) {
      this.pid = pid;
      int window = (int) Math.max(1, 1000 / periodMillis);
      this.thread = new Thread(() -> {
        double[] cpu = new double[window + 1];
        long[] at = new long[window + 1];
        int n = 0;
        while (!stop) {
          int i = n % cpu.length;
          cpu[i] = cpuSeconds(pid);
          at[i] = System.nanoTime();
          if (n >= window) {
            int j = (n - window) % cpu.length;
            double cores = (cpu[i] - cpu[j]) / ((at[i] - at[j]) / 1e9);
            if (!Double.isNaN(cores) && (Double.isNaN(peak) || cores > peak)) {
              peak = cores;
            }
          }
          n++;
          try {
            Thread.sleep(periodMillis);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "bench-peak-cpu-" + pid);
      thread.setDaemon(true);
      thread.start();
    }

    /** The busiest one-second window so far, in cores; NaN before the first second. */
    public double peakCores() {
      return peak;
    }

    public long pid() {
      return pid;
    }

    @Override
    public void close() {
      stop = true;
      thread.interrupt();
    }
  }
}
