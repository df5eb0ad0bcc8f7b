package dev.muster.cli;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Option;

/**
 * What {@code muster call} and {@code muster grpc-call} share (a picocli mixin): how many calls, how often, each
 * attempt's timeout and the retries, the output flags, and the loop that starts the calls and prints the summary.
 *
 * <p>Calls start at a fixed rate on one scheduler thread and complete on the transport's threads; a call's line is
 * printed when it completes. With {@code --count 0} the loop runs until SIGTERM/SIGINT and a shutdown hook prints
 * the summary.
 */
final class CallLoop {
  @Option(names = "--count", paramLabel = "N", defaultValue = "1",
      description = "How many calls; 0 = until SIGTERM/SIGINT (default ${DEFAULT-VALUE}).")
  int count;

  @Option(names = "--interval", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "Time between call starts (default ${DEFAULT-VALUE}).")
  Duration interval;

  @Option(names = "--attempt-timeout", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "Deadline of each attempt; an idempotent call whose attempt timed out is retried on another"
          + " endpoint (default ${DEFAULT-VALUE}).")
  Duration attemptTimeout;

  @Option(names = "--max-retries", paramLabel = "N", defaultValue = "1",
      description = "Retries of an idempotent call, each on a different endpoint, within the retry budget (default"
          + " ${DEFAULT-VALUE}; 0 = none).")
  int maxRetries;

  @Option(names = "--json", description = "One JSON object per call and for the summary.")
  boolean json;

  @Option(names = "--quiet", description = "Print only the summary.")
  boolean quiet;

  /** One call: start call {@code n}, print its line when it completes, then run {@code done}. */
  interface Call {
    void start(long n, Instant started, long startNanos, Runnable done);
  }

  /** Checks what picocli cannot; throws {@link Errors.UsageException} (exit 2) naming the flag. */
  void validate() {
    if (count < 0) {
      throw new Errors.UsageException("--count is " + count + ": use 0 (until stopped) or more");
    }
    if (interval.isZero()) {
      throw new Errors.UsageException("--interval is 0: use a positive duration such as 50ms");
    }
    if (attemptTimeout.isZero()) {
      throw new Errors.UsageException("--attempt-timeout is 0: use a positive duration such as 300ms");
    }
    if (maxRetries < 0) {
      throw new Errors.UsageException("--max-retries is " + maxRetries + ": use 0 (no retry) or more");
    }
  }

  /**
   * Starts {@code call} every {@code --interval} until {@code --count} calls have completed (or, with 0, until the
   * process is stopped), then runs {@code summary}; returns when every counted call completed. {@code name} names
   * the threads.
   */
  void run(String name, Call call, Runnable summary) throws InterruptedException {
    ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, name + "-ticker");
      t.setDaemon(true);
      return t;
    });
    CountDownLatch finished = new CountDownLatch(count == 0 ? 1 : count);
    Thread summaryOnStop = new Thread(() -> {
      ticker.shutdownNow();
      summary.run();
    }, name + "-summary");
    try {
      if (count == 0) {
        Runtime.getRuntime().addShutdownHook(summaryOnStop);
      }
      AtomicLong seq = new AtomicLong();
      ticker.scheduleAtFixedRate(() -> {
        long n = seq.incrementAndGet();
        if (count != 0 && n > count) {
          return;
        }
        call.start(n, Instant.now(), System.nanoTime(), () -> {
          if (count != 0) {
            finished.countDown();
          }
        });
      }, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
      finished.await();
      ticker.shutdownNow();
      summary.run();
    } finally {
      ticker.shutdownNow();
    }
  }
}
