package dev.muster.console.internal;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The console's HTTP threads: a fixed pool of {@code maxClients + 8} threads (a stream holds one while open, and
 * streams stop at {@code maxClients}, so eight are always left for pages and drains) behind a bounded queue.
 *
 * <p>Why a second pool: the JDK server hands each accepted connection to its executor before reading the request,
 * and drops the connection without an answer when the executor refuses it. So a request that finds the queue full
 * goes to a small overflow pool whose threads are {@link Busy}: {@link Routes} answers 503 on them at once,
 * without reading a body. When the overflow pool is full too, the connection is dropped; the JDK closes it within
 * its request deadline ({@code sun.net.httpserver.maxReqTime}), which also bounds how long a slow client holds any
 * thread here before its request has arrived.
 *
 * <p>Thread-safe; {@link #shutdownNow()} stops both pools.
 */
final class HttpPool extends ThreadPoolExecutor {
  /** Requests waiting for a thread; one more gets 503. */
  static final int QUEUE = 64;
  private static final int OVERFLOW_THREADS = 4;

  private final ThreadPoolExecutor overflow;

  HttpPool(int threads) {
    this(threads, QUEUE);
  }

  HttpPool(int threads, int queue) {
    super(threads, threads, 0, TimeUnit.MILLISECONDS, new ArrayBlockingQueue<>(queue), numbered(false));
    overflow = new ThreadPoolExecutor(0, OVERFLOW_THREADS, 5, TimeUnit.SECONDS, new SynchronousQueue<>(),
        numbered(true), (r, e) -> { /* dropped: the JDK's request deadline closes the connection */ });
    setRejectedExecutionHandler((r, e) -> {
      if (e.isShutdown()) {
        throw new RejectedExecutionException("the console is closing");
      }
      overflow.execute(r);
    });
  }

  /** Whether the calling thread answers only "busy": the queue was full when its request came. */
  static boolean overloaded() {
    return Thread.currentThread() instanceof Busy;
  }

  @Override
  public java.util.List<Runnable> shutdownNow() {
    overflow.shutdownNow();
    return super.shutdownNow();
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return super.awaitTermination(timeout, unit) && overflow.awaitTermination(timeout, unit);
  }

  /** An overflow thread. */
  static final class Busy extends Thread {
    Busy(Runnable r, String name) {
      super(r, name);
    }
  }

  private static java.util.concurrent.ThreadFactory numbered(boolean busy) {
    AtomicInteger n = new AtomicInteger();
    String prefix = busy ? "muster-console-busy-" : "muster-console-http-";
    return r -> {
      Thread t = busy ? new Busy(r, prefix + n.incrementAndGet()) : new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
