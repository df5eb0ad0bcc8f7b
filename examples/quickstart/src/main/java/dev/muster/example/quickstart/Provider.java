package dev.muster.example.quickstart;

import com.sun.net.httpserver.HttpServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A provider: serves {@code GET /hello} on a free loopback port and registers itself as service {@code hello}
 * until it is stopped (Ctrl-C drains for a second, then revokes its lease).
 *
 * <pre>
 * java -p ... -m dev.muster.example.quickstart/dev.muster.example.quickstart.Provider [ENDPOINTS]
 * </pre>
 */
public final class Provider implements AutoCloseable {
  private final HttpServer server;
  private final EtcdRegistry registry;
  private final Registration registration;

  private Provider(HttpServer server, EtcdRegistry registry, Registration registration) {
    this.server = server;
    this.registry = registry;
    this.registration = registration;
  }

  /** Starts the HTTP endpoint and registers it; returns once the key is in etcd. */
  public static Provider start(String endpoints) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(endpoints));
    try {
      Instance instance = Instance.of("hello", "127.0.0.1", server.getAddress().getPort()).zone("a");
      server.createContext("/hello", exchange -> {
        byte[] body = ("hello from " + instance.id() + "\n").getBytes(StandardCharsets.UTF_8);
        exchange.sendResponseHeaders(200, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(body);
        }
      });
      server.start();
      RegistrarConfig config = RegistrarConfig.builder().ttl(Duration.ofSeconds(3))
          .drain(Duration.ofSeconds(1)).build();
      return new Provider(server, registry, registry.register(instance, config));
    } catch (RuntimeException e) {
      server.stop(0);
      registry.close();
      throw e;
    }
  }

  /** The registered instance's id. */
  public String id() {
    return registration.instance().id();
  }

  /** Drains, revokes the lease, then stops serving. */
  @Override
  public void close() {
    try {
      registration.close();
      registry.close();
    } finally {
      server.stop(0);
    }
  }

  public static void main(String[] args) throws Exception {
    String endpoints = args.length > 0 ? args[0] : EtcdConfig.DEFAULT_ENDPOINT;
    Provider provider = start(endpoints);
    System.out.println("registered hello/" + provider.id() + " in " + endpoints + "; Ctrl-C to stop");
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      provider.close();
      stopped.countDown();
    }));
    stopped.await();
  }
}
