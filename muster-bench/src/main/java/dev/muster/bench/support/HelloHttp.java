package dev.muster.bench.support;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;

/**
 * The provider side of the caller measurements: {@code GET /hello} answers 200 "hello from ID" on 127.0.0.1.
 * The same server behind Muster's and Curator's providers, so calls differ only in discovery. Runs on a small
 * fixed pool of daemon threads until the process ends (it is SIGKILLed).
 */
public final class HelloHttp {
  private HelloHttp() {}

  public static void serve(String id, int port) {
    try {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 128);
      byte[] body = ("hello from " + id).getBytes(StandardCharsets.UTF_8);
      server.createContext("/hello", exchange -> {
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      });
      server.setExecutor(Executors.newFixedThreadPool(4, r -> {
        Thread t = new Thread(r, "hello-http");
        t.setDaemon(true);
        return t;
      }));
      server.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve /hello on 127.0.0.1:" + port + ": " + e.getMessage(), e);
    }
  }
}
