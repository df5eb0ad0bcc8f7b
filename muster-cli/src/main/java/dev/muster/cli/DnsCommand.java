package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.dns.DnsConfig;
import dev.muster.dns.DnsGateway;
import dev.muster.etcd.EtcdRegistry;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster dns}: a DNS-SD gateway (RFC 6763) answering from live endpoint caches, one per service of each
 * namespace served. Prints one {@code "event":"serving"} JSON line once it answers, then runs until Ctrl-C/SIGTERM.
 */
@Command(name = "dns", description = "Answer DNS-SD (PTR, SRV, TXT, A, AAAA) for the registry's services over UDP"
    + " and TCP, from live caches: dig @127.0.0.1 -p 8053 _orders._tcp.default.muster. PTR")
final class DnsCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdOptions etcd;

  @Mixin
  TrustKeyOptions trust;

  @Option(names = "--listen", paramLabel = "IP:PORT", defaultValue = "127.0.0.1:8053",
      description = "Address for both UDP and TCP; an IP literal, port 0 picks a free one (default ${DEFAULT-VALUE}).")
  String listen;

  @Option(names = "--domain", paramLabel = "DOMAIN", defaultValue = "muster.",
      description = "Parent of the zones: namespace NS is served as NS.DOMAIN (default ${DEFAULT-VALUE}).")
  String domain;

  @Option(names = "--namespace", paramLabel = "NS", split = ",", defaultValue = "default",
      description = "Namespaces to serve, one zone each; repeat or separate with commas (default ${DEFAULT-VALUE}).")
  List<String> namespaces;

  @Option(names = "--ttl", paramLabel = "D", defaultValue = "5s", converter = DurationConverter.class,
      description = "TTL of answers from a fresh cache, and of negative answers (default ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(names = "--stale-ttl", paramLabel = "D", defaultValue = "0s", converter = DurationConverter.class,
      description = "TTL while a service's cache is stale; 0 keeps resolvers from caching it (default"
          + " ${DEFAULT-VALUE}).")
  Duration staleTtl;

  @Option(names = "--zone", paramLabel = "Z",
      description = "The callers' zone: SRV priority 0 for its instances, 10 for others (default: none, all 0).")
  String zone;

  @Option(names = "--rate-limit", paramLabel = "N", defaultValue = "1000",
      description = "UDP queries per second from one source (IPv4 address, IPv6 /64); 0 = no limit (default"
          + " ${DEFAULT-VALUE}).")
  int rateLimit;

  @Option(names = "--rate-burst", paramLabel = "N", defaultValue = "1000",
      description = "Queries one source may send above the rate at once (default ${DEFAULT-VALUE}).")
  int rateBurst;

  @Option(names = "--slip", paramLabel = "K", defaultValue = "2",
      description = "Over the limit, answer every K-th query with an empty TC reply (retry over TCP), drop the rest;"
          + " 0 drops all (default ${DEFAULT-VALUE}).")
  int slip;

  @Option(names = "--udp-threads", paramLabel = "N", defaultValue = "2",
      description = "Threads answering UDP on the one socket (default ${DEFAULT-VALUE}).")
  int udpThreads;

  @Option(names = "--max-tcp-connections", paramLabel = "N", defaultValue = "64",
      description = "TCP connections served at once; more are closed (default ${DEFAULT-VALUE}).")
  int maxTcpConnections;

  @Option(names = "--tcp-idle-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Close a TCP connection idle this long (default ${DEFAULT-VALUE}).")
  Duration tcpIdleTimeout;

  @Option(names = "--services-refresh", paramLabel = "D", defaultValue = "5m", converter = DurationConverter.class,
      description = "New services and services gone are seen at once, by a watch of the namespaces' keys; this is how"
          + " often the keys are read again as a check of that watch (default ${DEFAULT-VALUE}, at least 1s).")
  Duration servicesRefresh;

  @Option(names = "--max-udp-payload", paramLabel = "BYTES", defaultValue = "1232",
      description = "Largest UDP reply whatever EDNS0 asks; 512 without EDNS0 (default ${DEFAULT-VALUE}).")
  int maxUdpPayload;

  @Option(names = "--max-stale", paramLabel = "D", converter = DurationConverter.class,
      description = "While etcd is unreachable, answer a service's names from its last set for at most this long,"
          + " then SERVFAIL until etcd answers (default: for the whole outage).")
  Duration maxStale;

  @Option(names = "--start-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Wait this long for the caches' first sets before serving what is known (default"
          + " ${DEFAULT-VALUE}).")
  Duration startTimeout;

  @Override
  public Integer call() throws InterruptedException {
    DnsConfig config = DnsConfig.builder().listen(HostPort.listenAddress(listen, "8053")).domain(domain)
        .namespaces(namespaces).ttl(ttl).staleTtl(staleTtl).zone(zone).rateLimit(rateLimit, rateBurst).slip(slip).udpThreads(udpThreads)
        .maxTcpConnections(maxTcpConnections).tcpIdleTimeout(tcpIdleTimeout).servicesRefresh(servicesRefresh)
        .maxUdpPayload(maxUdpPayload).maxStale(maxStale).trustedKeys(trust.keys()).build();
    EtcdRegistry registry = EtcdRegistry.connect(etcd.etcdConfig());
    DnsGateway gateway;
    try {
      gateway = DnsGateway.start(registry, config, startTimeout);
    } catch (UncheckedIOException e) {
      registry.close();
      throw new Errors.UsageException(e.getMessage());
    }
    StopOnSignal stop = StopOnSignal.install("muster-dns-stop", gateway::close, registry::close);
    PrintWriter out = spec.commandLine().getOut();
    ObjectNode line = JsonLines.event("serving", Instant.now());
    InetSocketAddress bound = gateway.address();
    line.put("address", bound.getAddress().getHostAddress());
    line.put("port", bound.getPort());
    gateway.zones().forEach(line.putArray("zones")::add);
    ObjectNode services = line.putObject("services");
    gateway.services().forEach((ns, names) -> names.forEach(services.putArray(ns)::add));
    JsonLines.print(out, line);
    stop.await();
    return 0;
  }
}
