package dev.muster.etcd.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * Whether some etcd endpoint accepts a TCP connection, one probe shared by every caller for a window
 * ({@link EtcdConnection#reachable()}; thousands of broken caches must not each connect to etcd's port).
 *
 * <p>Thread-safe, and no lock is held while connecting. At most one probe is in flight: the caller that finds none in
 * flight and no answer younger than the window installs a new one by compare-and-set and runs its connects on its
 * own thread; a caller that finds one in flight waits for its answer (a future, not a lock), and one that finds a
 * fresh answer takes it at once. The wait is uninterruptible, as the connects themselves are, and bounded by
 * endpoints × the connect timeout; an interrupt that arrives meanwhile stays set. The window starts when a probe's
 * connects end, so a shared answer is never older than the window, and it reads the injected clock.
 */
final class SharedProbe {
  /** A probe's answer: its number (1, 2, ... in start order), whether an endpoint accepted, when the probe ended. */
  record Answer(long number, boolean accepts, long atNanos) {}

  /** One probe: its number, and its answer once its connects are done. */
  private record Probe(long number, CompletableFuture<Answer> answer) {}

  private final List<URI> endpoints;
  private final long sharedForNanos;
  private final int connectTimeoutMillis;
  private final LongSupplier nanoTime;
  /** The probe in flight, or the last one; null before the first. */
  private final AtomicReference<Probe> last = new AtomicReference<>();

  SharedProbe(List<URI> endpoints, Duration sharedFor, Duration connectTimeout, LongSupplier nanoTime) {
    this.endpoints = List.copyOf(endpoints);
    this.sharedForNanos = sharedFor.toNanos();
    this.connectTimeoutMillis = Math.toIntExact(connectTimeout.toMillis());
    this.nanoTime = nanoTime;
  }

  /** The answer of the probe in flight or of a fresh one, or of a new probe run on this thread. */
  Answer answer() {
    while (true) {
      Probe p = last.get();
      if (p != null) {
        Answer done = p.answer().getNow(null);
        if (done == null) {
          return p.answer().join(); // in flight: share it
        }
        if (nanoTime.getAsLong() - done.atNanos() < sharedForNanos) {
          return done;
        }
      }
      Probe mine = new Probe(p == null ? 1 : p.number() + 1, new CompletableFuture<>());
      if (last.compareAndSet(p, mine)) {
        boolean accepts = false;
        try {
          accepts = connectsToAnEndpoint();
        } finally {
          // Completed even if connecting threw something unexpected, so that nobody waits forever.
          mine.answer().complete(new Answer(mine.number(), accepts, nanoTime.getAsLong()));
        }
        return mine.answer().join();
      }
      // Another caller installed a probe first: share that one.
    }
  }

  /** How many probes were started, the one in flight included. */
  long started() {
    Probe p = last.get();
    return p == null ? 0 : p.number();
  }

  private boolean connectsToAnEndpoint() {
    for (URI endpoint : endpoints) {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()), connectTimeoutMillis);
        return true;
      } catch (IOException e) {
        // try the next endpoint
      }
    }
    return false;
  }
}
