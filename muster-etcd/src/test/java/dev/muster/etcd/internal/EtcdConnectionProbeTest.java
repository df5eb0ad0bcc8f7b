package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One reachability probe serves every cache of a connection for {@link EtcdConnection#PROBE_SHARED_FOR}: many
 * broken caches must not each open a TCP connection to etcd's port every probe interval. A plain loopback
 * listener stands in for etcd's port (the probe only connects; it speaks no gRPC). The sharing window reads the
 * connection's fake clock, which only the tests move.
 */
class EtcdConnectionProbeTest {
  private final AtomicLong now = new AtomicLong(1_000_000_000_000L);
  private final List<AutoCloseable> open = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  @Test
  @Timeout(30)
  void manyCallersShareOneProbeAndSeeThePortGoAwayOnlyOnceTheWindowHasPassed() throws Exception {
    ServerSocket server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(() -> {
      while (!server.isClosed()) {
        try (Socket s = server.accept()) {
          // accepted; the probe only connects
        } catch (IOException e) {
          return;
        }
      }
    });
    acceptor.start();
    try (EtcdConnection connection = new EtcdConnection(
        EtcdConfig.of("http://127.0.0.1:" + server.getLocalPort()), now::get)) {
      List<Thread> callers = new ArrayList<>();
      AtomicInteger unreachable = new AtomicInteger();
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
      assertThat(unreachable).hasValue(0);
      assertThat(connection.probes()).as("1,600 calls within one window").isEqualTo(1);

      server.close();
      acceptor.join();
      now.addAndGet(EtcdConnection.PROBE_SHARED_FOR.toNanos() - 1);
      assertThat(connection.reachable()).as("the shared answer, still inside its window").isTrue();
      assertThat(connection.probes()).isEqualTo(1);

      now.addAndGet(1); // a shared answer is never older than PROBE_SHARED_FOR
      assertThat(connection.reachable()).isFalse();
      assertThat(connection.probes()).isEqualTo(2);
    } finally {
      server.close();
    }
  }

  @Test
  @Timeout(30)
  void aCallerWaitsForTheProbeInFlightNotForALockAndSharesItsAnswer() throws Exception {
    // Five listeners that never accept, their accept queues full: Linux drops further SYNs, so each of the probe's
    // connects takes its whole timeout and the probe lasts 5 × PROBE_CONNECT_TIMEOUT (1 s), all on 127.0.0.1.
    List<String> endpoints = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      endpoints.add("http://127.0.0.1:" + unresponsivePort());
    }
    try (EtcdConnection connection = new EtcdConnection(EtcdConfig.of(String.join(",", endpoints)), now::get)) {
      ConcurrentLinkedQueue<Boolean> answers = new ConcurrentLinkedQueue<>();
      Thread prober = new Thread(() -> answers.add(connection.reachable()), "prober");
      prober.start();
      awaitTrue(() -> connection.probes() == 1); // lock-free, while the probe connects
      assertThat(prober.isAlive()).as("the prober is still connecting").isTrue();

      Thread sharer = new Thread(() -> answers.add(connection.reachable()), "sharer");
      sharer.start();
      awaitTrue(() -> sharer.getState() != Thread.State.NEW && sharer.getState() != Thread.State.RUNNABLE);
      assertThat(prober.isAlive()).as("the prober is still connecting").isTrue();
      assertThat(sharer.getState()).as("waiting for the probe's answer, not blocked on a monitor")
          .isIn(Thread.State.WAITING, Thread.State.TIMED_WAITING);

      prober.join();
      sharer.join();
      assertThat(answers).containsExactly(false, false);
      assertThat(connection.probes()).as("one probe for both").isEqualTo(1);
    }
  }

  /** A loopback port whose listener never accepts and whose accept queue is full: a connect to it hangs. */
  private int unresponsivePort() throws IOException {
    ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    open.add(server);
    InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort());
    for (int i = 0; i < 16; i++) {
      Socket filler = new Socket();
      try {
        filler.connect(address, 100);
        open.add(filler);
      } catch (SocketTimeoutException e) {
        filler.close();
        return server.getLocalPort(); // the queue is full
      }
    }
    throw new IllegalStateException("the accept queue of port " + server.getLocalPort() + " never filled: "
        + open.stream().map(Object::toString).collect(Collectors.joining(", ")));
  }

  private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waited 5 s").isNegative();
      Thread.sleep(1); // polling a real thread's state, not waiting out a clock
    }
  }
}
