package dev.muster.bench.support;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;

/**
 * Heap in use after full collections: the difference around building a structure is what it retains. Crude
 * next to a heap dump, but the same method for every structure measured here, and good to a few bytes per
 * instance at 10,000 instances.
 */
public final class Heap {
  private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

  private Heap() {}

  /** Bytes of heap in use after three {@link System#gc()} calls a little apart. */
  public static long usedAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Wait.sleep(Duration.ofMillis(100));
    }
    return MEMORY.getHeapMemoryUsage().getUsed();
  }
}
