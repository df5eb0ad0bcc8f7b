package dev.muster.bench.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * A caller that makes one call every {@code interval} on its own thread (fixed rate; a call that overruns
 * delays the next one only, no catch-up burst) and remembers when each call started and, if it failed as the
 * caller saw it, why. The measuring thread then counts calls in a time window. The Muster and the Curator
 * callers are this same loop around their own call.
 *
 * <p>Thread-safe: the loop thread appends under the instance lock; readers copy under it. {@code call} runs on
 * the loop thread, returns null for a success or a short reason for a failure, and must return within a bounded
 * time (its own timeouts).
 */
public final class CallLoop implements AutoCloseable {
  private final Duration interval;
  private final Supplier<String> call;
  private final List<Call> calls = new ArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;
  private int inARow;

  /** One call: when it started ({@link System#nanoTime()}) and why it failed, null if it succeeded. */
  public record Call(long startedAt, String failure) {}

  public CallLoop(Duration interval, Supplier<String> call) {
    this.interval = interval;
    this.call = call;
    this.thread = new Thread(this::loop, "bench-caller");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  private void loop() {
    long next = System.nanoTime();
    while (running) {
      long start = System.nanoTime();
      String failure = call.get();
      if (Thread.currentThread().isInterrupted()) {
        return; // closed mid-call: the call is not counted
      }
      synchronized (this) {
        calls.add(new Call(start, failure));
        inARow = failure == null ? inARow + 1 : 0;
      }
      next = Math.max(next + interval.toNanos(), System.nanoTime());
      long wait = next - System.nanoTime();
      if (wait > 0) {
        try {
          Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  public synchronized int successesInARow() {
    return inARow;
  }

  /** The calls started in [{@code fromNanos}, {@code toNanos}). */
  public synchronized List<Call> calls(long fromNanos, long toNanos) {
    return calls.stream().filter(c -> c.startedAt() - fromNanos >= 0 && c.startedAt() - toNanos < 0).toList();
  }

  public static long failed(List<Call> calls) {
    return calls.stream().filter(c -> c.failure() != null).count();
  }

  /** How many of {@code calls} failed for each reason, e.g. {@code {ConnectException=2}}. */
  public static Map<String, Integer> failuresByReason(List<Call> calls) {
    Map<String, Integer> byReason = new TreeMap<>();
    calls.stream().filter(c -> c.failure() != null).forEach(c -> byReason.merge(c.failure(), 1, Integer::sum));
    return byReason;
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
