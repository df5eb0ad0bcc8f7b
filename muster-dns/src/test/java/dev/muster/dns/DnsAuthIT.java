package dev.muster.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.Dig;
import dev.muster.testing.EtcdCluster;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The gateway on an etcd with auth: a user with read on the whole namespace serves it; a user with read on one
 * service only cannot list the namespace, and the gateway says so in {@code _muster-status} instead of failing.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class DnsAuthIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().build();

  private static EtcdConfig as(String user, String password) {
    return EtcdConfig.builder().endpoints(etcd.endpointsString()).credentials(user, password).build();
  }

  @Test
  void aUserWithReadOnTheNamespaceServesItAndOneWithoutIsReportedStale() throws Exception {
    try (EtcdAuth auth = EtcdAuth.connect(as("root", etcd.rootPassword()))) {
      auth.addUser("dns", "dns-secret");
      auth.grantConsumer("default", null, "dns"); // muster auth grant-consumer '*' dns
      auth.addUser("narrow", "narrow-secret");
      auth.grantConsumer("default", "orders", "narrow");
    }
    DnsConfig config = DnsConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0)).build();
    try (EtcdRegistry root = EtcdRegistry.connect(as("root", etcd.rootPassword()));
         Registration r = root.register(Instance.of("orders", "127.0.0.41", 8080).id("a"),
             RegistrarConfig.builder().drain(Duration.ZERO).build())) {
      try (EtcdRegistry dns = EtcdRegistry.connect(as("dns", "dns-secret"));
           DnsGateway gateway = DnsGateway.start(dns, config, Duration.ofSeconds(20))) {
        assertThat(Dig.query(gateway.address(), "a._orders._tcp.default.muster.", "SRV").data("SRV"))
            .containsExactly("0 100 8080 a.v1.orders.default.muster.");
      }
      try (EtcdRegistry narrow = EtcdRegistry.connect(as("narrow", "narrow-secret"));
           DnsGateway gateway = DnsGateway.start(narrow, config, Duration.ofSeconds(5))) {
        InetSocketAddress at = gateway.address();
        await().atMost(Duration.ofSeconds(10)).until(() ->
            Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0).contains("directory=stale"));
        assertThat(Dig.query(at, "_muster-status.default.muster.", "TXT").data("TXT").get(0))
            .contains("\"stale=true\"", "\"services=0\"");
        assertThat(Dig.query(at, "a._orders._tcp.default.muster.", "SRV").status()).isEqualTo("NXDOMAIN");
        assertThat(gateway.stats().errors()).isZero();
      }
    }
  }
}
