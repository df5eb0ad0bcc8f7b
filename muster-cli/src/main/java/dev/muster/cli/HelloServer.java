package dev.muster.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo provider's HTTP endpoint ({@code muster register --serve-hello}): {@code GET /hello} answers
 * {@code 200 hello from ID}, after {@code delay} when one is given (so the lab can have requests in flight while
 * the provider drains); {@code GET /health} answers {@code 200 ok}; anything else 404.
 *
 * <p>Faults, for the lab's health scenarios ({@code --hello-fault-file FILE}): before each answer the server reads
 * the file's first word. Absent or empty: normal. {@code 503}: every answer is 503 (alive, lease held, not
 * serving). {@code hang}: requests are accepted and never answered while the word stays (the connection is left
 * open). {@code health-503}: only {@code /health} answers 503, {@code /hello} works (a shared dependency the health
 * check looks at blinked). Writing or deleting the file switches modes at once; a hung request answers normally
 * once the file no longer says {@code hang}. Used by the lab and the calling tests as a real provider process.
 * Built on the JDK's {@code com.sun.net.httpserver} so the provider needs nothing beyond the jar.
 *
 * <p>Thread-safe: requests run on a fixed pool (larger when answers are delayed, since a delayed answer holds its
 * thread); {@link #stop()} may be called from any thread.
 */
final class HelloServer {
  private final HttpServer server;
  private final ExecutorService pool;
  private final Duration delay;
  private final AtomicLong served = new AtomicLong();
  private final Path faultFile;

  private HelloServer(HttpServer server, ExecutorService pool, Duration delay, Path faultFile) {
    this.server = server;
    this.pool = pool;
    this.delay = delay;
    this.faultFile = faultFile;
  }

  /** Listens on {@code host:port} and answers as instance {@code id}, each /hello after {@code delay} (0: at once). */
  static HelloServer start(String host, int port, String id, Duration delay) {
    return start(host, port, id, delay, null);
  }

  /** {@link #start(String, int, String, Duration)} with faults read from {@code faultFile} (null: none). */
  static HelloServer start(String host, int port, String id, Duration delay, Path faultFile) {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 128);
      ExecutorService pool = Executors.newFixedThreadPool(delay.isZero() && faultFile == null ? 4 : 64, r -> {
        Thread t = new Thread(r, "muster-hello");
        t.setDaemon(true);
        return t;
      });
      HelloServer hello = new HelloServer(server, pool, delay, faultFile);
      byte[] body = ("hello from " + id + "\n").getBytes(StandardCharsets.UTF_8);
      server.createContext("/", exchange -> hello.answer(exchange, body));
      server.setExecutor(pool);
      server.start();
      return hello;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve /hello on " + host + ":" + port + ": " + e.getMessage()
          + " (is the port free?)", e);
    }
  }

  long served() {
    return served.get();
  }

  /** Stops accepting, gives exchanges in progress up to a second, then frees the threads. */
  void stop() {
    server.stop(1);
    pool.shutdown();
  }

  /** The fault file's first word, lower case; "" when there is none. */
  private String fault() {
    if (faultFile == null) {
      return "";
    }
    try {
      String s = Files.readString(faultFile, StandardCharsets.UTF_8).trim();
      int space = s.indexOf(' ');
      return (space < 0 ? s : s.substring(0, space)).toLowerCase(java.util.Locale.ROOT);
    } catch (IOException e) {
      return ""; // absent (or unreadable): no fault
    }
  }

  private void answer(HttpExchange exchange, byte[] body) throws IOException {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      boolean get = "GET".equals(exchange.getRequestMethod());
      boolean health = get && "/health".equals(path);
      String fault = fault();
      while (fault.equals("hang")) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return; // stopping
        }
        fault = fault();
      }
      if (fault.equals("503") || (health && fault.equals("health-503"))) {
        byte[] out = "unavailable\n".getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(503, out.length);
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(out);
        }
        return;
      }
      if (health) {
        byte[] out = "ok\n".getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(200, out.length);
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(out);
        }
        return;
      }
      boolean hello = get && "/hello".equals(path);
      if (hello && !delay.isZero()) {
        try {
          Thread.sleep(delay.toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // stopping: answer at once
        }
      }
      byte[] out = hello ? body : "not found\n".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
      exchange.sendResponseHeaders(hello ? 200 : 404, out.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(out);
      }
      if (hello) {
        served.incrementAndGet();
      }
    }
  }
}
