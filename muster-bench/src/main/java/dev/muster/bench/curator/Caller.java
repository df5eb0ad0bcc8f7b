package dev.muster.bench.curator;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;

/**
 * A caller as Curator's documentation has one: every call asks the {@code ServiceProvider} for an instance, makes
 * one HTTP attempt ({@code GET /hello}, deadline {@code attemptTimeout}) and, if it fails, reports the instance with
 * {@code noteError} so the {@code DownInstancePolicy} can leave it out. Curator has no retry, so there is none: a
 * failed attempt is a failed call. A {@code null} instance (nothing left to pick) is a failed call too.
 *
 * <p>Threading: calls run one at a time on a single scheduler thread at a fixed rate (a call that overruns its slot
 * is followed at once by the next). The call log is guarded by its own lock, held only to append or copy; {@link
 * #calls} and {@link #consecutiveSuccesses} may be read from any thread.
 */
final class Caller implements AutoCloseable {
  /** One call: when it started ({@link System#nanoTime()}) and why it failed, {@code null} if it succeeded. */
  record Call(long startedAt, String failure) {}

  private final ServiceProvider<String> provider;
  private final Duration attemptTimeout;
  private final HttpClient http;
  private final ScheduledExecutorService scheduler;
  private final List<Call> log = new ArrayList<>();
  private final AtomicInteger consecutiveSuccesses = new AtomicInteger();

  private Caller(ServiceProvider<String> provider, Duration attemptTimeout) {
    this.provider = provider;
    this.attemptTimeout = attemptTimeout;
    // HTTP/1.1: the providers' server does not speak HTTP/2, and an h2c upgrade offer would only add bytes.
    this.http = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(attemptTimeout)
        .build();
    this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "curator-caller");
      t.setDaemon(true);
      return t;
    });
  }

  /** Starts calling every {@code interval}, the first call now. */
  static Caller start(ServiceProvider<String> provider, Duration interval, Duration attemptTimeout) {
    Caller caller = new Caller(provider, attemptTimeout);
    caller.scheduler.scheduleAtFixedRate(caller::callOnce, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
    return caller;
  }

  private void callOnce() {
    long startedAt = System.nanoTime();
    ServiceInstance<String> instance = null;
    String failure;
    try {
      instance = provider.getInstance();
      if (instance == null) {
        failure = "no instance";
      } else {
        HttpRequest request = HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + instance.getPort() + "/hello"))
            .timeout(attemptTimeout)
            .GET()
            .build();
        int status = http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode();
        failure = status == 200 ? null : "HTTP " + status;
      }
    } catch (InterruptedException e) {
      // Only close() interrupts: the run is over and this call is not counted.
      Thread.currentThread().interrupt();
      return;
    } catch (Exception e) {
      failure = e.getClass().getSimpleName();
    }
    if (failure != null && instance != null) {
      provider.noteError(instance);
    }
    if (failure == null) {
      consecutiveSuccesses.incrementAndGet();
    } else {
      consecutiveSuccesses.set(0);
    }
    synchronized (log) {
      log.add(new Call(startedAt, failure));
    }
  }

  int consecutiveSuccesses() {
    return consecutiveSuccesses.get();
  }

  /** The finished calls that started in {@code [from, to)} (nanoTime). */
  List<Call> calls(long from, long to) {
    List<Call> copy;
    synchronized (log) {
      copy = List.copyOf(log);
    }
    return copy.stream().filter(c -> c.startedAt() - from >= 0 && c.startedAt() - to < 0).toList();
  }

  /** How many of {@code calls} failed for each reason, e.g. {@code {ConnectException=2}}. */
  static Map<String, Integer> failuresByReason(List<Call> calls) {
    Map<String, Integer> byReason = new TreeMap<>();
    calls.stream().filter(c -> c.failure() != null).forEach(c -> byReason.merge(c.failure(), 1, Integer::sum));
    return byReason;
  }

  /** Stops calling and waits for a call in progress to end (at most one attempt timeout). */
  @Override
  public void close() {
    scheduler.shutdownNow();
    try {
      scheduler.awaitTermination(attemptTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
