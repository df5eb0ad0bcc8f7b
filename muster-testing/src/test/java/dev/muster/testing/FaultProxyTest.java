package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The proxy's modes against a plain echo server on loopback. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class FaultProxyTest {
  private ServerSocket echo;
  private FaultProxy proxy;

  @BeforeEach
  void startEchoServerAndProxy() throws IOException {
    echo = new ServerSocket();
    echo.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    Thread t = new Thread(() -> {
      while (!echo.isClosed()) {
        try {
          Socket s = echo.accept();
          Thread h = new Thread(() -> {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
              in.transferTo(out);
            } catch (IOException e) {
              // peer went away
            }
          });
          h.setDaemon(true);
          h.start();
        } catch (IOException e) {
          return;
        }
      }
    });
    t.setDaemon(true);
    t.start();
    proxy = FaultProxy.to("127.0.0.1", echo.getLocalPort());
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    echo.close();
  }

  @Test
  void passForwardsBytesBothWays() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "hello")).isEqualTo("hello");
    }
  }

  @Test
  void cutClosesOpenConnectionsAndRefusesNewOnesUntilPass() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "a")).isEqualTo("a");
      proxy.cut();
      s.setSoTimeout(5000);
      assertThat(s.getInputStream().read()).isEqualTo(-1);
    }
    assertThat(refusedOrReset()).as("a new connection while cut is refused or reset").isTrue();
    proxy.pass();
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "b")).isEqualTo("b");
    }
  }

  @Test
  void blackholeHoldsBytesWithoutClosingAndDeliversThemAfterPass() throws IOException {
    try (Socket s = connect()) {
      assertThat(roundTrip(s, "x")).isEqualTo("x");
      proxy.blackhole();
      s.getOutputStream().write("held".getBytes());
      s.setSoTimeout(500);
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      proxy.pass();
      s.setSoTimeout(5000);
      assertThat(new String(s.getInputStream().readNBytes(4))).isEqualTo("held");
    }
  }

  @Test
  void aConnectionOpenedDuringBlackholeIsAcceptedButSilent() throws IOException {
    proxy.blackhole();
    try (Socket s = connect()) {
      s.getOutputStream().write("q".getBytes());
      s.setSoTimeout(300);
      assertThatThrownBy(() -> s.getInputStream().read()).isInstanceOf(SocketTimeoutException.class);
      proxy.pass();
      s.setSoTimeout(5000);
      assertThat(s.getInputStream().read()).isEqualTo('q');
    }
  }

  @Test
  void latencyDelaysEachDirection() throws IOException {
    proxy.latency(Duration.ofMillis(200));
    try (Socket s = connect()) {
      long start = System.nanoTime();
      assertThat(roundTrip(s, "slow")).isEqualTo("slow");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(400));
    }
  }

  @Test
  void closingTheProxyClosesItsConnections() throws IOException {
    Socket s = connect();
    roundTrip(s, "z");
    await().until(() -> proxy.openConnections() == 1);
    proxy.close();
    s.setSoTimeout(5000);
    assertThat(s.getInputStream().read()).isEqualTo(-1);
    s.close();
  }

  @Test
  void aNonLoopbackTargetIsRefused() {
    assertThatThrownBy(() -> FaultProxy.to("10.0.0.7", 2379)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a loopback address");
  }

  /** True when a new connection fails: refused at connect, or reset / closed before any byte comes back. */
  private boolean refusedOrReset() {
    try (Socket s = connect()) {
      s.getOutputStream().write("x".getBytes());
      s.setSoTimeout(5000);
      return s.getInputStream().read() == -1;
    } catch (IOException e) {
      return true;
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), proxy.port()), 2000);
    return s;
  }

  private static String roundTrip(Socket s, String text) throws IOException {
    s.getOutputStream().write(text.getBytes());
    s.setSoTimeout(5000);
    return new String(s.getInputStream().readNBytes(text.length()));
  }
}
