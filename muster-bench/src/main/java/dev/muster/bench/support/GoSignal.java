package dev.muster.bench.support;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * How the scale bench's provider JVMs start registering together: each waits until the bench creates one file,
 * then registers all of its providers at once on a few threads, so that JVM start-up is not in the measured time.
 */
public final class GoSignal {
  private static final int THREADS = 32;

  /** One registration; it may block until registered. */
  public interface Registering {
    void register(int index) throws Exception;
  }

  private GoSignal() {}

  /**
   * Waits until {@code go} exists, then runs {@code register} for 0 ≤ i < {@code count} and waits for all; the burst
   * is profiled when the JVM was asked to ({@link BurstProfile}).
   */
  public static void awaitThenRegister(Path go, int count, Registering register)
      throws InterruptedException, ExecutionException {
    BurstProfile profile = BurstProfile.start(); // before GO: starting JFR is not in the burst
    while (!Files.exists(go)) {
      Thread.sleep(2);
    }
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (profile) {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int index = i;
        done.add(pool.submit(() -> {
          register.register(index);
          return null;
        }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
  }
}
