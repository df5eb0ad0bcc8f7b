package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.dns.Cidr;
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
    + " and TCP, from live caches: dig @127.0.0.1 -p 8053 _orders._tcp.default.muster. PTR. Safe to expose: response"
    + " rate limiting, ANY answered with one HINFO (RFC 8482), a TCP deadline and per-source cap, --allow-from, and"
    + " no metadata in TXT unless --txt-metadata names it.")
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
      description = "Response rate limiting (RRL), per source prefix: UDP replies a second to one IPv4 /24 or IPv6"
          + " /56 (see --rrl-ipv4-prefix), whatever was asked; 0 = no such limit (default ${DEFAULT-VALUE}). Before"
          + " issue 35 this counted one address; a prefix is what a spoofer's victim is.")
  int rateLimit;

  @Option(names = "--rate-burst", paramLabel = "N", defaultValue = "1000",
      description = "Replies one prefix may get above --rate-limit at once (default ${DEFAULT-VALUE}).")
  int rateBurst;

  @Option(names = "--rrl-responses-per-second", paramLabel = "N", defaultValue = "50",
      description = "RRL per response: UDP replies a second to one prefix for one question (same name and type),"
          + " as many at once; bounds what a reflection attack repeating one question sends its victim; 0 = no such"
          + " limit (default ${DEFAULT-VALUE}).")
  int rrlResponsesPerSecond;

  @Option(names = "--slip", paramLabel = "K", defaultValue = "2",
      description = "Over either RRL limit, answer every K-th query with an empty TC reply no larger than the query"
          + " (a real client retries over TCP), drop the rest; 0 drops all, 1 truncates all (default"
          + " ${DEFAULT-VALUE}, as BIND).")
  int slip;

  @Option(names = "--rrl-ipv4-prefix", paramLabel = "BITS", defaultValue = "24",
      description = "IPv4 sources in one block of this prefix length count as one for RRL, 8-32 (default"
          + " ${DEFAULT-VALUE}).")
  int rrlIpv4Prefix;

  @Option(names = "--rrl-ipv6-prefix", paramLabel = "BITS", defaultValue = "56",
      description = "IPv6 sources in one block of this prefix length count as one for RRL, 16-128 (default"
          + " ${DEFAULT-VALUE}).")
  int rrlIpv6Prefix;

  @Option(names = "--rrl-exempt", paramLabel = "CIDR", split = ",", converter = CidrConverter.class,
      description = "Sources RRL never limits, such as your own resolvers: 10.0.0.0/8, 127.0.0.1; repeat or separate"
          + " with commas (default: none).")
  List<Cidr> rrlExempt = List.of();

  @Option(names = "--allow-from", paramLabel = "CIDR", split = ",", converter = CidrConverter.class,
      description = "Answer only these sources; others get REFUSED over UDP and their TCP connection closed. Repeat or"
          + " separate with commas (default: answer anyone).")
  List<Cidr> allowFrom = List.of();

  @Option(names = "--txt-metadata", paramLabel = "KEY", split = ",",
      description = "Instance metadata keys that TXT records carry as key=value; * carries all. Anyone who reaches the"
          + " port reads them, whatever etcd's roles allow (default: none; version, zone, region, weight and tags"
          + " stay, and so does _muster-status).")
  List<String> txtMetadata = List.of();

  @Option(names = "--udp-threads", paramLabel = "N", defaultValue = "2",
      description = "Threads answering UDP on the one socket (default ${DEFAULT-VALUE}).")
  int udpThreads;

  @Option(names = "--max-tcp-connections", paramLabel = "N", defaultValue = "64",
      description = "TCP connections served at once; more are closed (default ${DEFAULT-VALUE}).")
  int maxTcpConnections;

  @Option(names = "--tcp-per-source", paramLabel = "N", defaultValue = "4",
      description = "TCP connections served at once from one address; one more is closed at accept (default"
          + " ${DEFAULT-VALUE}).")
  int tcpPerSource;

  @Option(names = "--tcp-idle-timeout", paramLabel = "D", defaultValue = "10s", converter = DurationConverter.class,
      description = "Close a TCP connection idle this long (default ${DEFAULT-VALUE}).")
  Duration tcpIdleTimeout;

  @Option(names = "--tcp-deadline", paramLabel = "D", defaultValue = "5s", converter = DurationConverter.class,
      description = "Close a TCP connection this long after it was accepted, whatever it is doing, so slow clients"
          + " cannot hold it (default ${DEFAULT-VALUE}).")
  Duration tcpDeadline;

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
        .namespaces(namespaces).ttl(ttl).staleTtl(staleTtl).zone(zone).rateLimit(rateLimit, rateBurst).slip(slip)
        .rrlResponsesPerSecond(rrlResponsesPerSecond).rrlPrefixes(rrlIpv4Prefix, rrlIpv6Prefix).rrlExempt(rrlExempt)
        .udpThreads(udpThreads).maxTcpConnections(maxTcpConnections).tcpPerSource(tcpPerSource)
        .tcpIdleTimeout(tcpIdleTimeout).tcpDeadline(tcpDeadline).servicesRefresh(servicesRefresh)
        .maxUdpPayload(maxUdpPayload).maxStale(maxStale).trustedKeys(trust.keys()).allowFrom(allowFrom)
        .txtMetadata(txtMetadata).build();
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
