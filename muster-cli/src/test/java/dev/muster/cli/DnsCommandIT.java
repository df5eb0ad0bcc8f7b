package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.Dig;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.watch.WatchEvent;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster dns} as a real process, fed by real {@code muster register} processes and asked by the real
 * {@code dig}: its answers equal {@code muster ls}, and they change when a provider is SIGKILLed (at its lease's
 * expiry) or SIGTERMed (at DRAINING). Delays are printed (they show up in the failsafe report) and only bounded
 * generously.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class DnsCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration EXIT = Duration.ofSeconds(30);

  private String[] connection() {
    return new String[] {"--endpoints", etcd.endpointsString()};
  }

  private ChildProcess register(String id, String address, String... more) {
    List<String> args = new ArrayList<>(List.of("register", "--service", "shop", "--id", id, "--address", address,
        "--ttl", "3s"));
    args.addAll(List.of(more));
    args.addAll(List.of(connection()));
    return MusterJar.start(args.toArray(String[]::new));
  }

  @Test
  void answersEqualLsAndChangeWhenAProviderIsKilledOrStopped() throws Exception {
    Dig.binary();
    try (ChildProcess k1 = register("k1", "127.0.0.31:7001");
         ChildProcess k2 = register("k2", "127.0.0.32:7002", "--version", "v2");
         ChildProcess k3 = register("k3", "127.0.0.33:7003", "--zone", "z1", "--tag", "blue", "--meta", "team=pay");
         ChildProcess dns = MusterJar.start(MusterJar.concat(new String[] {"dns", "--listen", "127.0.0.1:0",
             "--ttl", "2s", "--txt-metadata", "team", "--allow-from", "127.0.0.1"}, connection()))) {
      for (ChildProcess p : List.of(k1, k2, k3)) {
        MusterJar.awaitEvent(p, "registered");
      }
      JsonNode serving = MusterJar.awaitEvent(dns, "serving");
      assertThat(serving.get("zones").get(0).asText()).isEqualTo("default.muster.");
      InetSocketAddress at = new InetSocketAddress("127.0.0.1", serving.get("port").asInt());
      await().atMost(Duration.ofSeconds(20)).until(() ->
          Dig.query(at, "_shop._tcp.default.muster.", "PTR").data("PTR").size() == 3);

      // what ls --json lists is what dig reads: ids, versions, ports, addresses, weights, zone, tag, metadata
      List<JsonNode> listed;
      try (ChildProcess ls = MusterJar.run(EXIT, MusterJar.concat(new String[] {"ls", "shop", "--json"},
          connection()))) {
        listed = ls.json().events("instance");
      }
      assertThat(listed).hasSize(3);
      assertThat(Dig.query(at, "_services._dns-sd._udp.default.muster.", "PTR").data("PTR"))
          .containsExactly("_shop._tcp.default.muster.");
      for (JsonNode i : listed) {
        String id = i.get("id").asText();
        String target = id + "." + i.get("version").asText() + ".shop.default.muster.";
        assertThat(Dig.query(at, id + "._shop._tcp.default.muster.", "SRV").data("SRV"))
            .containsExactly("0 " + i.get("weight").asInt() + " " + i.get("port").asInt() + " " + target);
        assertThat(Dig.query(at, target, "A").data("A")).containsExactly(i.get("address").asText());
        assertThat(Dig.query(at, id + "._shop._tcp.default.muster.", "TXT").data("TXT").get(0))
            .contains("\"version=" + i.get("version").asText() + "\"");
      }
      assertThat(Dig.query(at, "k3._shop._tcp.default.muster.", "TXT").data("TXT"))
          .containsExactly("\"version=v1\" \"zone=z1\" \"weight=100\" \"blue\" \"team=pay\"");
      assertThat(Dig.query(at, "v2.shop.default.muster.", "A").data("A")).containsExactly("127.0.0.32");
      // --allow-from 127.0.0.1: another loopback source is refused; ANY is RFC 8482's one HINFO
      assertThat(Dig.query(at, "v2.shop.default.muster.", "A", "-b", "127.0.0.7").status()).isEqualTo("REFUSED");
      assertThat(Dig.query(at, "_shop._tcp.default.muster.", "ANY").answer()).extracting(Dig.Rr::type)
          .containsExactly("HINFO");
      assertThat(Dig.query(at, "shop.default.muster.", "A", "+tcp").data("A"))
          .containsExactlyInAnyOrder("127.0.0.31", "127.0.0.32", "127.0.0.33");

      try (Client client = Client.builder().endpoints(etcd.endpointsString().split(",")).build()) {
        long revision = client.getKVClient().get(KeyWatch.bytes("/muster/default/shop/v1/k1")).get(10,
            TimeUnit.SECONDS).getHeader().getRevision();
        try (KeyWatch w1 = new KeyWatch(client, "/muster/default/shop/v1/k1", revision + 1);
             KeyWatch w2 = new KeyWatch(client, "/muster/default/shop/v2/k2", revision + 1)) {
          long killed = System.nanoTime();
          k1.kill(); // SIGKILL: no revoke; the key goes when the 3 s lease expires
          long gone = awaitGone(at, "k1._shop._tcp.default.muster.");
          WatchEvent.EventType deleted = WatchEvent.EventType.DELETE;
          await().atMost(Duration.ofSeconds(5)).until(() -> w1.first(deleted) != null);
          long expiry = w1.first(deleted).nanos();
          System.out.printf("dns: SIGKILL -> lease expiry (etcd's DELETE) %d ms -> gone from dig's answer %d ms"
              + " after the DELETE%n", ms(expiry - killed), ms(gone - expiry));
          assertThat(ms(gone - expiry)).as("gone after the DELETE, ms").isLessThan(3000);
          assertThat(Dig.query(at, "_shop._tcp.default.muster.", "PTR").data("PTR")).hasSize(2);

          long term = System.nanoTime();
          k2.terminate(); // SIGTERM: DRAINING first (not served), then the revoke after the drain
          long gone2 = awaitGone(at, "k2._shop._tcp.default.muster.");
          await().atMost(Duration.ofSeconds(5)).until(() -> !w2.seen().isEmpty());
          long draining = w2.seen().get(0).nanos();
          System.out.printf("dns: SIGTERM -> DRAINING put %d ms -> gone from dig's answer %d ms after it%n",
              ms(draining - term), ms(gone2 - draining));
          assertThat(w2.seen().get(0).type()).isEqualTo(WatchEvent.EventType.PUT);
          assertThat(w2.seen().get(0).value()).contains("DRAINING");
          assertThat(ms(gone2 - draining)).as("gone after DRAINING, ms").isLessThan(3000);
          assertThat(k2.exitCode(EXIT)).isIn(0, 143); // 143: the JVM exits 128 + SIGTERM after its hooks
        }
      }
      assertThat(Dig.query(at, "_shop._tcp.default.muster.", "PTR").data("PTR"))
          .containsExactly("k3._shop._tcp.default.muster.");
      assertThat(Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0))
          .contains("\"stale=false\"", "\"service=shop revision=");
      assertThat(dns.isAlive()).as("%s", dns).isTrue();
    }
  }

  @Test
  void badFlagsExitTwoWithOneLine() {
    for (String[] bad : List.of(new String[] {"--listen", "localhost:8053"}, new String[] {"--ttl", "1500ms"},
        new String[] {"--domain", "bad_domain."}, new String[] {"--namespace", "Bad"})) {
      try (ChildProcess p = MusterJar.run(EXIT, MusterJar.concat(MusterJar.concat(new String[] {"dns"}, bad),
          connection()))) {
        assertThat(p.exitCode().getAsInt()).as("%s", p).isEqualTo(2);
        assertThat(p.stderr()).as("%s", p).hasSize(1);
        assertThat(p.stderr().get(0)).startsWith("muster: ").contains(bad[0].substring(2));
      }
    }
  }

  /** Polls dig (one process per query) until {@code name} is NXDOMAIN; returns the nanoTime it was seen gone. */
  private static long awaitGone(InetSocketAddress at, String name) {
    long[] when = new long[1];
    await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
      boolean gone = Dig.query(at, name, "SRV").status().equals("NXDOMAIN");
      when[0] = System.nanoTime();
      return gone;
    });
    return when[0];
  }

  private static long ms(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }
}
