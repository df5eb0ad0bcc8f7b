package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/**
 * UDP and TCP on one port: with port 0, a port UDP got but TCP finds taken is given up for another (a fresh-clone run
 * once failed "cannot listen on 127.0.0.1:0 (Address already in use)"); with a fixed port, the failure is final.
 */
class DnsGatewayBindTest {
  private static int port(DnsGateway.Sockets s) {
    return ((InetSocketAddress) s.udp().socket().getLocalSocketAddress()).getPort();
  }

  @Test
  void withPortZeroAPortTakenForTcpIsGivenUpForAnother() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    try (ServerSocket taken = new ServerSocket(0, 1, loopback)) {
      int p = taken.getLocalPort();
      DnsGateway.Sockets s = DnsGateway.bind(new InetSocketAddress(loopback, 0), p);
      try {
        assertThat(port(s)).isNotEqualTo(p).isEqualTo(s.tcp().getLocalPort());
      } finally {
        s.udp().close();
        s.tcp().close();
      }
    }
  }

  @Test
  void withAFixedPortATakenPortIsAnError() throws Exception {
    InetAddress loopback = InetAddress.getByName("127.0.0.1");
    try (ServerSocket taken = new ServerSocket(0, 1, loopback)) {
      int p = taken.getLocalPort();
      assertThatThrownBy(() -> DnsGateway.bind(new InetSocketAddress(loopback, p), p))
          .isInstanceOf(BindException.class);
    }
  }
}
