package dev.muster.console.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A deadline on reading a request body, on top of the JDK server's own ({@code sun.net.httpserver.maxReqTime},
 * which the JDK reads once per JVM and which an earlier HTTP server in the same JVM may have left off): when it
 * passes, the reading thread is interrupted, which closes the connection (the JDK's request stream reads an
 * interruptible channel), so a body sent a byte a second cannot hold an HTTP thread.
 *
 * <p>Opened and closed by the reading thread; the timer thread only calls {@link #cut()}. The lock makes sure no
 * interrupt lands after {@link #close()}: the flag is cleared there if the deadline did pass.
 */
final class ReadDeadline implements AutoCloseable {
  private final Thread reader = Thread.currentThread();
  private final ScheduledFuture<?> task;
  private boolean done; // guarded by this
  private boolean cut; // guarded by this

  ReadDeadline(ScheduledExecutorService timer, Duration after) {
    task = timer.schedule(this::cut, after.toMillis(), TimeUnit.MILLISECONDS);
  }

  private synchronized void cut() {
    if (!done) {
      cut = true;
      reader.interrupt();
    }
  }

  /** Whether the deadline passed while reading. */
  synchronized boolean passed() {
    return cut;
  }

  @Override
  public void close() {
    boolean wasCut;
    synchronized (this) {
      done = true;
      wasCut = cut;
    }
    task.cancel(false);
    if (wasCut) {
      Thread.interrupted(); // the read failed already; the thread goes back to the pool uninterrupted
    }
  }
}
