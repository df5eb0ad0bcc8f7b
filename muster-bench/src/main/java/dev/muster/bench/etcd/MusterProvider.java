package dev.muster.bench.etcd;

import dev.muster.bench.support.HelloHttp;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.internal.RegistrarControls;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A provider process for the kill -9 measurements: serves {@code GET /hello}, registers with Muster's registrar
 * and prints one JSON line per registration event, keepalives included (the bench reads the last renewal
 * before a kill to split the stale window into lease remainder and expiry detection + delivery).
 *
 * <p>Usage: {@code MusterProvider ENDPOINTS SERVICE ID HTTP_PORT TTL_SECONDS KEEPALIVE_MILLIS}. It runs until it
 * is killed. Lines go through one synchronized stream on the registration's thread.
 */
public final class MusterProvider {
  private MusterProvider() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 6) {
      System.err.println("usage: MusterProvider ENDPOINTS SERVICE ID HTTP_PORT TTL_SECONDS KEEPALIVE_MILLIS");
      System.exit(2);
    }
    String id = args[2];
    int port = Integer.parseInt(args[3]);
    HelloHttp.serve(id, port);
    PrintStream out = System.out;
    RegistrarConfig config = RegistrarConfig.builder().ttl(Duration.ofSeconds(Long.parseLong(args[4])))
        .keepaliveInterval(Duration.ofMillis(Long.parseLong(args[5]))).drain(Duration.ZERO)
        // Twenty of these JVMs start at once on two cores: loading gRPC and making the first call can take longer
        // than the default 10 s. That is set-up, not what is measured.
        .startTimeout(Duration.ofSeconds(60)).build();
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(args[0]));
    try {
      NegativeControls.register(registry, Instance.of(args[1], "127.0.0.1", port).id(id), config,
          RegistrarControls.PRODUCTION.withReportKeepalives(true), event -> {
        out.println("{\"event\":\"" + event.type().wireName() + "\",\"ts\":\""
            + event.ts().truncatedTo(ChronoUnit.MICROS) + "\",\"id\":\"" + id + "\",\"lease\":" + event.lease()
            + "}");
        out.flush();
      });
    } catch (RuntimeException e) { // say it in one line and exit, rather than idle unregistered until killed
      System.err.println("MusterProvider " + id + ": " + e.getMessage());
      System.exit(4);
    }
    out.println("{\"event\":\"started\",\"ts\":\"" + Instant.now() + "\",\"id\":\"" + id + "\"}");
    out.flush();
    Thread.currentThread().join(); // until SIGKILL
  }
}
