package dev.muster.cli;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo provider's HTTP endpoint ({@code muster register --serve-hello}): {@code GET /hello} answers
 * {@code 200 hello from ID}, after {@code delay} when one is given (so the lab can have requests in flight while
 * the provider drains); anything else 404. Used by the lab and the calling tests as a real provider process.
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

  private HelloServer(HttpServer server, ExecutorService pool, Duration delay) {
    this.server = server;
    this.pool = pool;
    this.delay = delay;
  }

  /** Listens on {@code host:port} and answers as instance {@code id}, each /hello after {@code delay} (0: at once). */
  static HelloServer start(String host, int port, String id, Duration delay) {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 128);
      ExecutorService pool = Executors.newFixedThreadPool(delay.isZero() ? 4 : 32, r -> {
        Thread t = new Thread(r, "muster-hello");
        t.setDaemon(true);
        return t;
      });
      HelloServer hello = new HelloServer(server, pool, delay);
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

  private void answer(HttpExchange exchange, byte[] body) throws IOException {
    try (exchange) {
      boolean hello = "GET".equals(exchange.getRequestMethod()) && "/hello".equals(exchange.getRequestURI().getPath());
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
