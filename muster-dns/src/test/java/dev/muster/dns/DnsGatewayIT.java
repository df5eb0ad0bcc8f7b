package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.Dig;
import dev.muster.testing.EtcdCluster;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Hashtable;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import javax.naming.NamingEnumeration;
import javax.naming.directory.Attribute;
import javax.naming.directory.InitialDirContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.Type;

/**
 * The gateway on a real etcd, asked by clients no one here wrote: the real {@code dig} and the JDK's own DNS
 * resolver (JNDI {@code dns:}). Also bad packets over the real sockets, the rate limit, and staleness while etcd is
 * down.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DnsGatewayIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  /** Closing revokes at once: a drain (10 s by default) would make each close, and the whole class, slow. */
  private static final RegistrarConfig NO_DRAIN = RegistrarConfig.builder().drain(Duration.ZERO).build();
  private static EtcdRegistry registry;
  private static final List<Registration> registrations = new ArrayList<>();

  @BeforeAll
  static void register() {
    Dig.binary(); // fails at once, saying how to install dig, when it is missing
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.11", 8080).id("o1").zone("z1")
        .tag("canary").meta("team", "pay"), NO_DRAIN));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.12", 8081).id("o2").zone("z2"), NO_DRAIN));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.13", 8082).id("o3").version("v2"), NO_DRAIN));
    registrations.add(registry.register(Instance.of("orders", "127.0.0.14", 8083).id("o4")
        .state(InstanceState.STARTING), NO_DRAIN));
    registrations.add(registry.register(Instance.of("users", "::1", 9000).id("u1"), NO_DRAIN));
    registrations.add(registry.register(Instance.of("payments", "127.0.0.21", 7000).id("p1").namespace("blue"), NO_DRAIN));
  }

  @AfterAll
  static void unregister() {
    registrations.forEach(Registration::close);
    registry.close();
  }

  private static DnsGateway start(DnsConfig.Builder config) {
    return DnsGateway.start(registry, config.listen(new InetSocketAddress("127.0.0.1", 0))
        .namespaces(List.of("default", "blue")).txtMetadata(List.of("team")).build(), Duration.ofSeconds(20));
  }

  @Test
  void digBrowsesAndResolvesWhatTheRegistryLists() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      InetSocketAddress at = gateway.address();
      assertThat(Dig.query(at, "_services._dns-sd._udp.default.muster.", "PTR").data("PTR"))
          .containsExactly("_orders._tcp.default.muster.", "_users._tcp.default.muster.");
      assertThat(Dig.query(at, "_services._dns-sd._udp.blue.muster.", "PTR").data("PTR"))
          .containsExactly("_payments._tcp.blue.muster.");

      // what ls lists, less the STARTING o4: instance PTRs, SRV (port, weight, target), TXT and A
      List<Instance> routable = registry.list("default", "orders").instances().stream()
          .filter(i -> i.state() == InstanceState.UP).toList();
      Dig.Answer ptr = Dig.query(at, "_orders._tcp.default.muster.", "PTR");
      assertThat(ptr.flags()).contains("aa");
      assertThat(ptr.data("PTR")).containsExactlyInAnyOrderElementsOf(routable.stream()
          .map(i -> i.id() + "._orders._tcp.default.muster.").toList());
      assertThat(ptr.additional()).extracting(Dig.Rr::type).contains("SRV", "TXT", "A");
      for (Instance i : routable) {
        String name = i.id() + "._orders._tcp.default.muster.";
        String target = i.id() + "." + i.version() + ".orders.default.muster.";
        assertThat(Dig.query(at, name, "SRV").data("SRV"))
            .containsExactly("0 " + i.weight() + " " + i.port() + " " + target);
        assertThat(Dig.query(at, target, "A").data("A")).containsExactly(i.address());
        assertThat(Dig.query(at, name, "TXT").data("TXT").get(0)).contains("\"version=" + i.version() + "\"")
            .contains("\"weight=" + i.weight() + "\"");
      }
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "TXT").data("TXT"))
          .containsExactly("\"version=v1\" \"zone=z1\" \"weight=100\" \"canary\" \"team=pay\"");
      assertThat(Dig.query(at, "orders.default.muster.", "A").data("A"))
          .containsExactlyInAnyOrder("127.0.0.11", "127.0.0.12", "127.0.0.13");
      assertThat(Dig.query(at, "v2.orders.default.muster.", "A").data("A")).containsExactly("127.0.0.13");
      assertThat(Dig.query(at, "users.default.muster.", "AAAA").data("AAAA")).containsExactly("::1");
      assertThat(Dig.query(at, "o4._orders._tcp.default.muster.", "SRV").status()).isEqualTo("NXDOMAIN");
      Dig.Answer nodata = Dig.query(at, "orders.default.muster.", "TXT");
      assertThat(nodata.status()).isEqualTo("NOERROR");
      assertThat(nodata.answer()).isEmpty();
      assertThat(nodata.authority()).extracting(Dig.Rr::type).containsExactly("SOA");
      assertThat(Dig.query(at, "example.com.", "A").status()).isEqualTo("REFUSED");
      Dig.Answer tcp = Dig.query(at, "_orders._tcp.default.muster.", "PTR", "+tcp");
      assertThat(tcp.tcp()).isTrue();
      assertThat(tcp.data("PTR")).hasSize(3);
      assertThat(Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0))
          .contains("\"stale=false\"", "\"services=2\"");
      assertThat(gateway.stats().errors()).isZero();

      io.micrometer.core.instrument.MeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
      try (var bound = gateway.bindMeters(meters)) { // what dig asked above, as meters
        assertThat(meters.get("muster.dns.queries").tags("type", "SRV", "result", "nxdomain").functionCounter()
            .count()).isEqualTo(1);
        assertThat(meters.get("muster.dns.queries").tags("type", "TXT", "result", "nodata").functionCounter()
            .count()).isPositive();
        assertThat(meters.get("muster.dns.queries").tags("type", "A", "result", "refused").functionCounter()
            .count()).isEqualTo(1);
        assertThat(meters.get("muster.dns.records.rejected").gauge().value()).isZero();
      }
      assertThat(meters.getMeters()).as("unbound").isEmpty();
    }
  }

  @Test
  void srvAtTheServiceNameAsDigAndTheJdksResolverAskIt() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      InetSocketAddress at = gateway.address();
      List<Instance> routable = registry.list("default", "orders").instances().stream()
          .filter(i -> i.state() == InstanceState.UP).toList();
      assertThat(routable).hasSize(3);
      // RFC 2782's name, as an SRV client asks it: dig SRV _orders._tcp.default.muster
      Dig.Answer srv = Dig.query(at, "_orders._tcp.default.muster", "SRV");
      assertThat(srv.status()).isEqualTo("NOERROR");
      assertThat(srv.flags()).contains("aa").doesNotContain("tc");
      assertThat(srv.answer()).extracting(Dig.Rr::name).containsOnly("_orders._tcp.default.muster.");
      assertThat(srv.data("SRV")).containsExactlyInAnyOrderElementsOf(routable.stream()
          .map(i -> "0 " + i.weight() + " " + i.port() + " " + i.id() + "." + i.version() + ".orders.default.muster.")
          .toList());
      assertThat(srv.additional()).extracting(r -> r.name() + " " + r.type() + " " + r.data())
          .containsExactlyInAnyOrderElementsOf(routable.stream()
              .map(i -> i.id() + "." + i.version() + ".orders.default.muster. A " + i.address()).toList());
      // each agrees with the instance's own SRV
      for (Instance i : routable) {
        assertThat(srv.data("SRV")).containsAll(Dig.query(at, i.id() + "._orders._tcp.default.muster.", "SRV")
            .data("SRV"));
      }
      Dig.Answer users = Dig.query(at, "_users._tcp.default.muster", "SRV");
      assertThat(users.data("SRV")).containsExactly("0 100 9000 u1.v1.users.default.muster.");
      assertThat(users.additional()).extracting(r -> r.type() + " " + r.data()).containsExactly("AAAA ::1");
      assertThat(Dig.query(at, "_orders._tcp.default.muster", "PTR").data("PTR")).hasSize(3); // PTR as before
      assertThat(Dig.query(at, "_nope._tcp.default.muster", "SRV").status()).isEqualTo("NXDOMAIN");

      // the JDK's own SRV consumer: JNDI's DNS provider
      List<String> jdk = jndiSrv(at, "_orders._tcp.default.muster");
      assertThat(jdk).containsExactlyInAnyOrderElementsOf(srv.data("SRV"));

      // a service with no UP instance: the name exists, without an SRV (NODATA, SOA in Authority)
      Registration idle = registry.register(Instance.of("idle", "127.0.0.61", 6100).id("i1")
          .state(InstanceState.STARTING), NO_DRAIN);
      try {
        await().atMost(Duration.ofSeconds(20)).until(() -> gateway.services().get("default").contains("idle"));
        Dig.Answer nodata = Dig.query(at, "_idle._tcp.default.muster", "SRV");
        assertThat(nodata.status()).isEqualTo("NOERROR");
        assertThat(nodata.answer()).isEmpty();
        assertThat(nodata.authority()).extracting(Dig.Rr::type).containsExactly("SOA");
      } finally {
        idle.close();
      }
      assertThat(gateway.stats().errors()).isZero();
    }
  }

  @Test
  void twoHundredInstancesAreTruncatedOverUdpAndWholeOverTcp() throws Exception {
    List<Registration> many = new ArrayList<>();
    try {
      for (int i = 0; i < 200; i++) {
        many.add(registry.register(Instance.of("wide", "127.0.1." + (i + 1), 8000 + i).id("w" + i), NO_DRAIN));
      }
      try (DnsGateway gateway = start(DnsConfig.builder())) {
        InetSocketAddress at = gateway.address();
        await().atMost(Duration.ofSeconds(30)).until(() ->
            Dig.query(at, "_wide._tcp.default.muster.", "PTR", "+tcp").data("PTR").size() == 200);
        Dig.Answer udp = Dig.query(at, "_wide._tcp.default.muster.", "PTR", "+ignore");
        assertThat(udp.truncated()).as("%s", udp.output()).isTrue();
        assertThat(udp.tcp()).isFalse();
        Dig.Answer retried = Dig.query(at, "_wide._tcp.default.muster.", "PTR"); // dig retries over TCP on TC
        assertThat(retried.retriedOverTcp()).isTrue();
        assertThat(retried.data("PTR")).hasSize(200);
        assertThat(retried.additional()).hasSize(600);
        assertThat(Dig.query(at, "wide.default.muster.", "A", "+tcp").data("A")).hasSize(200);
        // the service's SRV set: whole RRsets or TC over UDP, then whole over TCP, for dig and for the JDK
        Dig.Answer srvUdp = Dig.query(at, "_wide._tcp.default.muster", "SRV", "+ignore");
        assertThat(srvUdp.truncated()).as("%s", srvUdp.output()).isTrue();
        assertThat(srvUdp.answer()).isEmpty();
        Dig.Answer srv = Dig.query(at, "_wide._tcp.default.muster", "SRV");
        assertThat(srv.retriedOverTcp()).isTrue();
        assertThat(srv.data("SRV")).hasSize(200).contains("0 100 8199 w199.v1.wide.default.muster.");
        assertThat(srv.additional()).hasSize(200).extracting(Dig.Rr::type).containsOnly("A");
        assertThat(jndiSrv(at, "_wide._tcp.default.muster")).hasSize(200);
      }
    } finally {
      many.forEach(Registration::close);
    }
  }

  @Test
  void aServiceThatAppearsAfterTheStartIsServedAndDroppedWhenItsLastInstanceGoes() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      InetSocketAddress at = gateway.address();
      assertThat(gateway.services().get("default")).doesNotContain("late");
      Registration late = registry.register(Instance.of("late", "127.0.0.51", 6000).id("l1"), NO_DRAIN);
      try {
        await().atMost(Duration.ofSeconds(20)).until(() ->
            Dig.query(at, "l1._late._tcp.default.muster.", "SRV").data("SRV").size() == 1);
        assertThat(Dig.query(at, "_services._dns-sd._udp.default.muster.", "PTR").data("PTR"))
            .contains("_late._tcp.default.muster.");
      } finally {
        late.close();
      }
      // its cache is closed and its names go: the browse list no longer names it, and the service is NXDOMAIN
      await().atMost(Duration.ofSeconds(20)).until(() -> !gateway.services().get("default").contains("late"));
      assertThat(Dig.query(at, "_services._dns-sd._udp.default.muster.", "PTR").data("PTR"))
          .doesNotContain("_late._tcp.default.muster.");
      assertThat(Dig.query(at, "_late._tcp.default.muster.", "PTR").status()).isEqualTo("NXDOMAIN");
    }
  }

  @Test
  void theJdksOwnResolverReadsTheSrvRecords() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder())) {
      Hashtable<String, String> env = new Hashtable<>();
      env.put("java.naming.factory.initial", "com.sun.jndi.dns.DnsContextFactory");
      env.put("java.naming.provider.url", "dns://127.0.0.1:" + gateway.address().getPort() + "/default.muster");
      InitialDirContext dns = new InitialDirContext(env);
      try {
        List<String> ptrs = values(dns.getAttributes("_orders._tcp", new String[] {"PTR"}).get("PTR"));
        assertThat(ptrs).containsExactlyInAnyOrder("o1._orders._tcp.default.muster.",
            "o2._orders._tcp.default.muster.", "o3._orders._tcp.default.muster.");
        List<String> srv = values(dns.getAttributes("o1._orders._tcp", new String[] {"SRV"}).get("SRV"));
        assertThat(srv).containsExactly("0 100 8080 o1.v1.orders.default.muster.");
        List<String> a = values(dns.getAttributes("o1.v1.orders", new String[] {"A"}).get("A"));
        assertThat(a).containsExactly("127.0.0.11");
        List<String> txt = values(dns.getAttributes("o1._orders._tcp", new String[] {"TXT"}).get("TXT"));
        assertThat(txt.get(0)).contains("version=v1", "zone=z1", "team=pay");
      } finally {
        dns.close();
      }
    }
  }

  @Test
  void malformedPacketsOverBothSocketsLeaveItAnswering() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder().rateLimit(0, 1).rrlResponsesPerSecond(0))) {
      InetSocketAddress at = gateway.address();
      byte[] good = Message.newQuery(Record.newRecord(Name.fromString("o1._orders._tcp.default.muster."),
          Type.SRV, DClass.IN)).toWire();
      Random random = new Random(2026);
      try (DatagramSocket udp = new DatagramSocket()) {
        for (int i = 0; i < 3000; i++) {
          byte[] p = BadPackets.mutate(good, random, i);
          udp.send(new DatagramPacket(p, p.length, at));
        }
        byte[] big = new byte[20_000]; // oversized: FORMERR (or dropped), never a crash
        System.arraycopy(good, 0, big, 0, 12);
        udp.send(new DatagramPacket(big, big.length, at));
      }
      for (int i = 0; i < 50; i++) { // over TCP: lengths that lie, halves, garbage
        try (Socket s = new Socket(at.getAddress(), at.getPort())) {
          s.setSoTimeout(2000);
          DataOutputStream out = new DataOutputStream(s.getOutputStream());
          byte[] p = BadPackets.mutate(good, random, i);
          out.writeShort(i % 2 == 0 ? p.length : p.length + 100);
          out.write(p);
          out.flush();
          s.shutdownOutput();
          drain(s);
        }
      }
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "SRV").data("SRV")).hasSize(1);
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "SRV", "+tcp").data("SRV")).hasSize(1);
      DnsGateway.Stats stats = gateway.stats();
      assertThat(stats.errors()).as("exceptions while answering: %s", stats).isZero();
      assertThat(stats.formerr()).as("%s", stats).isPositive();
    }
  }

  @Test
  void aSourceOverTheRateLimitIsDroppedWithSomeTruncatedRepliesAndRecovers() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder().rateLimit(20, 20).slip(2))) {
      InetSocketAddress at = gateway.address();
      byte[] query = Message.newQuery(Record.newRecord(Name.fromString("orders.default.muster."), Type.A,
          DClass.IN)).toWire();
      int answered = 0;
      int truncated = 0;
      try (DatagramSocket udp = new DatagramSocket()) {
        udp.setSoTimeout(300);
        for (int i = 0; i < 200; i++) {
          udp.send(new DatagramPacket(query, query.length, at));
        }
        byte[] buf = new byte[2048];
        while (true) {
          DatagramPacket p = new DatagramPacket(buf, buf.length);
          try {
            udp.receive(p);
          } catch (SocketTimeoutException e) {
            break;
          }
          if ((buf[2] & 0x02) != 0) {
            truncated++;
          } else {
            answered++;
          }
        }
      }
      assertThat(answered).as("answered of 200 sent at once (burst 20)").isBetween(20, 60);
      assertThat(truncated).as("TC slips").isPositive();
      assertThat(gateway.stats().rateLimited()).isPositive();
      // the source (dig runs on 127.0.0.1 too) recovers once its bucket refills (20 a second)
      await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(250)).ignoreExceptions().until(() ->
          Dig.query(at, "orders.default.muster.", "A").data("A").size() == 3);
    }
  }

  @Test
  @Order(Integer.MAX_VALUE) // it stops the shared etcd: last
  void whileEtcdIsDownTheAnswersComeWithTheStaleTtlAndTheStatusSaysStale() throws Exception {
    try (DnsGateway gateway = start(DnsConfig.builder().ttl(Duration.ofSeconds(30)).staleTtl(Duration.ZERO))) {
      InetSocketAddress at = gateway.address();
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "SRV").answer().get(0).ttl()).isEqualTo(30);
      etcd.member(0).kill();
      try {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
            Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0).contains("\"stale=true\""));
        Dig.Answer stale = Dig.query(at, "o1._orders._tcp.default.muster.", "SRV");
        assertThat(stale.data("SRV")).hasSize(1);
        await().atMost(Duration.ofSeconds(10)).until(() ->
            Dig.query(at, "o1._orders._tcp.default.muster.", "SRV").answer().get(0).ttl() == 0);
      } finally {
        etcd.member(0).restart();
      }
      await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() ->
          Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0).contains("\"stale=false\""));
      assertThat(Dig.query(at, "o1._orders._tcp.default.muster.", "SRV").answer().get(0).ttl()).isEqualTo(30);
    }
  }

  private static void drain(Socket s) throws java.io.IOException {
    DataInputStream in = new DataInputStream(s.getInputStream());
    try {
      while (in.read() >= 0) {
        // the reply, if any, until the gateway closes
      }
    } catch (SocketTimeoutException | java.net.SocketException e) {
      // a gateway that waits for the rest of a message times us out; that is its right
    }
  }

  /** The SRV records at {@code name} as the JDK's DNS provider (JNDI {@code dns:}) reads them from the gateway. */
  private static List<String> jndiSrv(InetSocketAddress at, String name) throws javax.naming.NamingException {
    Hashtable<String, String> env = new Hashtable<>();
    env.put("java.naming.factory.initial", "com.sun.jndi.dns.DnsContextFactory");
    env.put("java.naming.provider.url", "dns://127.0.0.1:" + at.getPort() + "/");
    InitialDirContext dns = new InitialDirContext(env);
    try {
      Attribute srv = dns.getAttributes(name, new String[] {"SRV"}).get("SRV");
      return srv == null ? List.of() : values(srv);
    } finally {
      dns.close();
    }
  }

  private static List<String> values(Attribute attribute) throws javax.naming.NamingException {
    List<String> out = new ArrayList<>();
    NamingEnumeration<?> all = attribute.getAll();
    while (all.hasMore()) {
      out.add(all.next().toString());
    }
    return out;
  }
}
