package dev.muster.bench.grpc;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A gRPC provider process for the kill -9 window: serves {@link Echo} on a free port, registers it with Muster's
 * registrar and prints {@code started PORT} once registered. It runs until it is killed; the bench kills it with
 * SIGKILL, so its lease stays in etcd until the TTL runs out, as after a crash.
 *
 * <p>Usage: {@code GrpcProvider ENDPOINTS SERVICE ID TTL_SECONDS KEEPALIVE_MILLIS}.
 */
public final class GrpcProvider {
  private GrpcProvider() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 5) {
      System.err.println("usage: GrpcProvider ENDPOINTS SERVICE ID TTL_SECONDS KEEPALIVE_MILLIS");
      System.exit(2);
    }
    String id = args[2];
    Server server;
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(Echo.service(id))
          .build().start();
    } catch (IOException e) {
      System.err.println("GrpcProvider " + id + ": cannot listen: " + e.getMessage());
      System.exit(3);
      return;
    }
    RegistrarConfig config = RegistrarConfig.builder().ttl(Duration.ofSeconds(Long.parseLong(args[3])))
        .keepaliveInterval(Duration.ofMillis(Long.parseLong(args[4]))).drain(Duration.ZERO).shutdownHook(false)
        .startTimeout(Duration.ofSeconds(60)).build(); // JVMs start side by side on two cores: set-up, not measured
    try {
      EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(args[0]));
      registry.register(Instance.of(args[1], "127.0.0.1", server.getPort()).id(id), config);
    } catch (RuntimeException e) { // say it in one line and exit, rather than serve unregistered until killed
      System.err.println("GrpcProvider " + id + ": " + e.getMessage());
      System.exit(4);
    }
    System.out.println("started " + server.getPort());
    System.out.flush();
    Thread.currentThread().join(); // until SIGKILL
  }
}
