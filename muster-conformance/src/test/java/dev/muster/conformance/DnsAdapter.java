package dev.muster.conformance;

import dev.muster.dns.DnsConfig;
import dev.muster.dns.DnsGateway;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.sign.TrustedKey;
import dev.muster.testing.Dig;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code muster dns} (a {@link DnsGateway} in this JVM, its services found by the directory's watch) asked by the
 * real {@code dig} for the service's SRV set, as Go's {@code net.LookupSRV} or Prometheus would.
 */
final class DnsAdapter implements Adapter {
  private final DnsGateway gateway;
  private final String name;

  DnsAdapter(EtcdRegistry registry, Setup setup) {
    gateway = DnsGateway.start(registry, DnsConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0))
        .namespaces(List.of(setup.namespace())).ttl(Duration.ofSeconds(1)).maxStale(setup.maxStale())
        .trustedKeys(setup.trustKey() == null ? List.of() : List.of(TrustedKey.read(setup.trustKey()))).build(),
        Duration.ofSeconds(10));
    name = "_" + Providers.SERVICE + "._tcp." + setup.namespace() + ".muster.";
  }

  @Override
  public String column() {
    return "muster dns";
  }

  @Override
  public Observation observe() {
    Dig.Answer a = Dig.query(gateway.address(), name, "SRV");
    if (a.status().equals("SERVFAIL")) {
      return Observation.listing(Set.of(), 1, 0, "SERVFAIL");
    }
    Set<String> ids = new LinkedHashSet<>();
    for (String srv : a.data("SRV")) { // "priority weight port ID.v1.echo.NS.muster."
      String target = srv.substring(srv.lastIndexOf(' ') + 1);
      ids.add(target.substring(0, target.indexOf('.')));
    }
    return Observation.listing(ids, 0, a.status().equals("NOERROR") ? 0 : 1, a.status());
  }

  @Override
  public void close() {
    gateway.close();
  }
}
