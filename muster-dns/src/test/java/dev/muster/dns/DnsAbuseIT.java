package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.Dig;
import dev.muster.testing.EtcdCluster;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * The gateway exposed (issue 35, item 4), on a real etcd, asked by the real {@code dig} and by sockets bound to other
 * loopback addresses (Linux lets a socket bind any 127.x.y.z, so a "spoofed" source needs no raw socket): response
 * rate limiting, RFC 8482's ANY, the TCP deadline and per-source cap, {@code allowFrom} and TXT metadata.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DnsAbuseIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final RegistrarConfig NO_DRAIN = RegistrarConfig.builder().drain(Duration.ZERO).build();
  private static EtcdRegistry registry;
  private static final List<Registration> registrations = new ArrayList<>();

  @BeforeAll
  static void register() {
    Dig.binary();
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.11", 8080).id("o1").zone("z1")
        .tag("canary").meta("team", "pay").meta("db-password", "hunter2"), NO_DRAIN));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.12", 8081).id("o2"), NO_DRAIN));
  }

  @AfterAll
  static void unregister() {
    registrations.forEach(Registration::close);
    registry.close();
  }

  private static DnsGateway start(DnsConfig.Builder config) {
    return DnsGateway.start(registry, config.listen(new InetSocketAddress("127.0.0.1", 0)).build(),
        Duration.ofSeconds(20));
  }

  private static byte[] query(String name, int type) throws Exception {
    return Message.newQuery(Record.newRecord(Name.fromString(name), type, DClass.IN)).toWire();
  }

  /** What came back to a set of sockets: replies with answers, TC replies, and bytes. */
  private record Received(int answered, int truncated, long bytes) {}

  /**
   * Sends {@code perSocket} copies of {@code query} from each socket, waits 500 ms for the replies to arrive, then reads
   * each socket until it has nothing more.
   */
  private static Received flood(List<DatagramSocket> sockets, InetSocketAddress at, byte[] query, int perSocket)
      throws Exception {
    for (int i = 0; i < perSocket; i++) {
      for (DatagramSocket s : sockets) {
        s.send(new DatagramPacket(query, query.length, at));
      }
    }
    int answered = 0;
    int truncated = 0;
    long bytes = 0;
    byte[] buf = new byte[4096];
    Thread.sleep(500);
    for (DatagramSocket s : sockets) {
      s.setSoTimeout(20);
      while (true) {
        DatagramPacket p = new DatagramPacket(buf, buf.length);
        try {
          s.receive(p);
        } catch (SocketTimeoutException e) {
          break;
        }
        bytes += p.getLength();
        if ((buf[2] & 0x02) != 0) {
          truncated++;
        } else if (((buf[6] & 0xFF) << 8 | (buf[7] & 0xFF)) > 0) {
          answered++;
        }
      }
    }
    return new Received(answered, truncated, bytes);
  }

  private static List<DatagramSocket> sockets(String prefix, int n) throws Exception {
    List<DatagramSocket> out = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      out.add(new DatagramSocket(new InetSocketAddress(InetAddress.getByName(prefix + i), 0)));
    }
    return out;
  }

  @Test
  void aFloodAtOnePrefixIsRateLimitedAndSlippedWhileOtherPrefixesAreAnswered() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      InetSocketAddress at = gateway.address();
      byte[] q = query("orders.default.muster.", Type.A);
      // the victim's /24: 40 addresses, as a spoofer writing them as the source would make the gateway answer them
      List<DatagramSocket> victims = sockets("127.0.9.", 40);
      Received got;
      try {
        got = flood(victims, at, q, 25);
      } finally {
        victims.forEach(DatagramSocket::close);
      }
      long sent = 40L * 25 * q.length;
      System.out.printf("dns rrl: 1000 queries (%d B) at one /24: %d answered, %d TC, %d B back (%.2fx)%n", sent,
          got.answered(), got.truncated(), got.bytes(), got.bytes() / (double) sent);
      assertThat(got.answered()).as("answered of 1,000 (per response: %d a second)",
          gateway.config().rrlResponsesPerSecond()).isLessThan(1000 / 4);
      assertThat(got.truncated()).as("slipped TC replies").isPositive();
      assertThat(got.bytes()).as("bytes reflected at the victim's prefix vs bytes the spoofer sent").isLessThan(sent);
      assertThat(gateway.stats().rateLimited()).isPositive();

      // under the limit: another /24 asking the same question 20 times gets every answer
      List<DatagramSocket> other = sockets("127.0.11.", 1);
      try {
        Received fine = flood(other, at, q, 20);
        assertThat(fine.answered()).isEqualTo(20);
        assertThat(fine.truncated()).isZero();
      } finally {
        other.forEach(DatagramSocket::close);
      }
      // and dig, from 127.0.0.1, is answered over UDP at once
      Dig.Answer dig = Dig.query(at, "orders.default.muster.", "A");
      assertThat(dig.tcp()).isFalse();
      assertThat(dig.data("A")).containsExactlyInAnyOrder("127.0.0.11", "127.0.0.12");
      assertThat(gateway.stats().errors()).isZero();
    }
  }

  @Test
  void digAskingAnyGetsOneRfc8482Hinfo() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      for (String name : List.of("_orders._tcp.default.muster.", "o1._orders._tcp.default.muster.",
          "orders.default.muster.")) {
        Dig.Answer any = Dig.query(gateway.address(), name, "ANY");
        assertThat(any.status()).isEqualTo("NOERROR");
        assertThat(any.answer()).as(name).singleElement().satisfies(r -> {
          assertThat(r.type()).isEqualTo("HINFO");
          assertThat(r.data()).isEqualTo("\"RFC8482\" \"\"");
        });
        assertThat(any.additional()).isEmpty();
      }
    }
  }

  @Test
  void slowTcpClientsAreCappedPerSourceAndClosedAtTheDeadline() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder().tcpPerSource(2).tcpDeadline(Duration.ofSeconds(2))
        .tcpIdleTimeout(Duration.ofSeconds(60)))) {
      InetSocketAddress at = gateway.address();
      InetAddress slow = InetAddress.getByName("127.0.0.5");
      try (Socket s1 = new Socket(at.getAddress(), at.getPort(), slow, 0);
           Socket s2 = new Socket(at.getAddress(), at.getPort(), slow, 0)) {
        Thread.sleep(100); // accepted by now: a third is the one over the cap
        try (Socket s3 = new Socket(at.getAddress(), at.getPort(), slow, 0)) {
          assertThat(closedByPeer(s3, Duration.ofSeconds(1))).as("a third connection from 127.0.0.5").isTrue();
        }
        // another source is served while the two hold their connections
        assertThat(Dig.query(at, "_orders._tcp.default.muster.", "PTR", "+tcp").data("PTR")).hasSize(2);
        // the two silent ones are closed at the 2 s deadline, long before the 60 s idle timeout
        assertThat(closedByPeer(s1, Duration.ofSeconds(20))).isTrue();
        assertThat(closedByPeer(s2, Duration.ofSeconds(20))).isTrue();
      }
      // a client that trickles its query a byte at a time, each under the idle timeout, is closed at the deadline
      byte[] q = query("_orders._tcp.default.muster.", Type.PTR);
      int sent = 0;
      boolean closed = false;
      try (Socket trickle = new Socket(at.getAddress(), at.getPort(), InetAddress.getByName("127.0.0.6"), 0)) {
        OutputStream out = trickle.getOutputStream();
        out.write(0);
        out.write(q.length);
        while (sent < q.length && !closed) {
          out.write(q[sent++]);
          out.flush();
          closed = closedByPeer(trickle, Duration.ofMillis(300)); // the pace: a byte every 300 ms
        }
      } catch (SocketException e) {
        closed = true; // a write after the gateway closed
      }
      assertThat(closed).as("closed before the %d-byte query was whole (sent %d)", q.length, sent).isTrue();
      assertThat(sent).isLessThan(q.length);
      DnsGateway.Stats stats = gateway.stats();
      assertThat(stats.tcpPerSourceRefused()).isEqualTo(1);
      assertThat(stats.tcpDeadlineClosed()).isGreaterThanOrEqualTo(3);
    }
  }

  /** Whether the gateway closed {@code s} within {@code wait}: a read that ends (EOF or reset) rather than waits. */
  private static boolean closedByPeer(Socket s, Duration wait) throws Exception {
    s.setSoTimeout((int) wait.toMillis());
    InputStream in = s.getInputStream();
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true; // reset
    }
  }

  @Test
  void allowFromRefusesOtherSourcesOverUdpAndClosesTheirTcp() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder().allowFrom(List.of(Cidr.parse("127.0.0.1/32"))))) {
      InetSocketAddress at = gateway.address();
      assertThat(Dig.query(at, "orders.default.muster.", "A").data("A")).hasSize(2);
      assertThat(Dig.query(at, "orders.default.muster.", "A", "+tcp").data("A")).hasSize(2);
      Dig.Answer refused = Dig.query(at, "orders.default.muster.", "A", "-b", "127.0.0.7");
      assertThat(refused.status()).isEqualTo("REFUSED");
      assertThat(refused.answer()).isEmpty();
      assertThatThrownBy(() -> Dig.query(at, "orders.default.muster.", "A", "+tcp", "-b", "127.0.0.7"))
          .as("dig over TCP from 127.0.0.7: the connection is closed").isInstanceOf(IllegalStateException.class);
      try (Socket s = new Socket(at.getAddress(), at.getPort(), InetAddress.getByName("127.0.0.7"), 0)) {
        assertThat(closedByPeer(s, Duration.ofSeconds(5))).isTrue();
      }
      assertThat(gateway.stats().notAllowed()).isGreaterThanOrEqualTo(3);
    }
  }

  @Test
  void txtCarriesMetadataOnlyForTheKeysOptedIn() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      InetSocketAddress at = gateway.address();
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "TXT").data("TXT"))
          .containsExactly("\"version=v1\" \"zone=z1\" \"weight=100\" \"canary\"");
      // the status TXT stays
      assertThat(Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0))
          .contains("\"stale=false\"", "\"services=1\"");
    }
    try (DnsGateway gateway = start(DnsConfig.builder().txtMetadata(List.of("team")))) {
      String txt = Dig.query(gateway.address(), "o1._orders._tcp.default.muster.", "TXT").data("TXT").get(0);
      assertThat(txt).contains("\"team=pay\"").doesNotContain("hunter2");
    }
  }
}
