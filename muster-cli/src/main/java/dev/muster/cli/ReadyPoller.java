package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * {@code muster register --ready-url URL}: polls URL on a daemon thread of its own ({@code muster-ready}) every
 * 200 ms, each GET within 1 s, until its first 2xx; then puts the registration UP and prints
 * {@code {"event":"ready","url":...,"after_ms":N}}. Stops without a put when the registration closes first.
 */
final class ReadyPoller {
  private static final Duration EVERY = Duration.ofMillis(200);
  private static final Duration TIMEOUT = Duration.ofSeconds(1);

  private ReadyPoller() {}

  static void start(URI url, Registration registration, PrintWriter out) {
    Thread t = new Thread(() -> poll(url, registration, out), "muster-ready");
    t.setDaemon(true);
    t.start();
  }

  private static void poll(URI url, Registration registration, PrintWriter out) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
    HttpRequest get = HttpRequest.newBuilder(url).timeout(TIMEOUT).GET().build();
    long t0 = System.nanoTime();
    try {
      while (registration.state() != RegistrationState.CLOSED && registration.state() != RegistrationState.FAILED) {
        if (ok(http, get)) {
          registration.ready().get(30, TimeUnit.SECONDS);
          ObjectNode node = JsonLines.event("ready", Instant.now());
          node.put("url", url.toString());
          node.put("after_ms", (System.nanoTime() - t0) / 1_000_000);
          JsonLines.print(out, node);
          return;
        }
        Thread.sleep(EVERY.toMillis());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Exception e) {
      ObjectNode node = JsonLines.event("ready_failed", Instant.now());
      node.put("url", url.toString());
      node.put("detail", e.getMessage());
      JsonLines.print(out, node);
    }
  }

  private static boolean ok(HttpClient http, HttpRequest get) throws InterruptedException {
    try {
      int status = http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode();
      return status >= 200 && status < 300;
    } catch (IOException e) {
      return false; // not listening yet, or too slow: try again
    }
  }
}
