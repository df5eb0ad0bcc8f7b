package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * One reachability probe serves every cache of a connection for {@link EtcdConnection#PROBE_SHARED_FOR}: many
 * broken caches must not each open a TCP connection to etcd's port every probe interval. A plain loopback
 * listener stands in for etcd's port (the probe only connects; it speaks no gRPC).
 */
class EtcdConnectionProbeTest {
  @Test
  void manyCallersShareOneProbeAndSeeThePortGoAway() throws Exception {
    AtomicInteger accepted = new AtomicInteger();
    ServerSocket server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(() -> {
      while (!server.isClosed()) {
        try (Socket s = server.accept()) {
          accepted.incrementAndGet();
        } catch (IOException e) {
          return;
        }
      }
    });
    acceptor.start();
    try (EtcdConnection connection = new EtcdConnection(EtcdConfig.of("http://127.0.0.1:" + server.getLocalPort()))) {
      List<Thread> callers = new ArrayList<>();
      AtomicInteger unreachable = new AtomicInteger();
      long t0 = System.nanoTime();
      for (int t = 0; t < 8; t++) {
        Thread caller = new Thread(() -> {
          for (int i = 0; i < 200; i++) {
            if (!connection.reachable()) {
              unreachable.incrementAndGet();
            }
          }
        });
        caller.start();
        callers.add(caller);
      }
      for (Thread caller : callers) {
        caller.join();
      }
      long windows = (System.nanoTime() - t0) / EtcdConnection.PROBE_SHARED_FOR.toNanos() + 1;
      assertThat(unreachable).hasValue(0);
      assertThat(connection.probes()).isBetween(1L, windows);
      assertThat(connection.probes()).isLessThan(1600);

      server.close();
      acceptor.join();
      Thread.sleep(EtcdConnection.PROBE_SHARED_FOR.toMillis() + 20);
      assertThat(connection.reachable()).isFalse(); // a shared answer is never older than PROBE_SHARED_FOR
    } finally {
      server.close();
    }
  }
}
