package dev.muster.bench.etcd;

import dev.muster.bench.support.HelloHttp;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.testing.JsonLog;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;

/**
 * A provider process for the kill -9 measurements: serves {@code GET /hello}, registers with Muster's registrar
 * and prints one JSON line per registration event, keepalives included, with the registrar's detail (the TTL
 * granted) and muster-testing's microsecond timestamps: the bench reads the last renewal before a kill to split the
 * stale window into lease remainder and expiry detection + delivery ({@link dev.muster.testing.LeaseRemainder}).
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
        out.println(JsonLog.line(JsonLog.entry(event.type().wireName(), event.ts()).put("id", id)
            .put("lease", event.lease()).put("detail", event.detail()).put("ttl_s", event.ttl().toSeconds())));
        out.flush();
      });
    } catch (RuntimeException e) { // say it in one line and exit, rather than idle unregistered until killed
      System.err.println("MusterProvider " + id + ": " + e.getMessage());
      System.exit(4);
    }
    out.println(JsonLog.line(JsonLog.entry("started", Instant.now()).put("id", id)));
    out.flush();
    Thread.currentThread().join(); // until SIGKILL
  }
}
