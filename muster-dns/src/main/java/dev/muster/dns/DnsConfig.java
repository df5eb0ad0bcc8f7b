package dev.muster.dns;

import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * How {@link DnsGateway} listens and answers. Immutable; start from {@link #defaults()} or {@link #builder()}.
 *
 * @param listen where both the UDP and the TCP listener bind (default 127.0.0.1:8053; port 0 picks a free one)
 * @param domain the parent of every zone, absolute and lower case (default {@code muster.}); namespace {@code NS}
 *     is served as the zone {@code NS.<domain>}
 * @param namespaces the namespaces served, one zone each (default {@code default})
 * @param ttl the TTL of every answer from a fresh cache, and the negative TTL (SOA minimum) (default 5 s)
 * @param staleTtl the TTL while the service's cache is stale (default 0: resolvers do not keep what may be out of
 *     date)
 * @param zone the caller's zone: when set, SRV priority is 0 for instances in it and 10 for the others; when null
 *     every SRV has priority 0
 * @param rateLimit response rate limiting (RRL, as BIND's {@code all-per-second}): UDP replies per second to one
 *     source prefix (an IPv4 /{@code rrlIpv4Prefix}, an IPv6 /{@code rrlIpv6Prefix}), whatever was asked; 0 turns
 *     this limit off (default 1000)
 * @param rateBurst how many replies above {@code rateLimit} one prefix may get at once (default 1000)
 * @param slip over either RRL limit, every {@code slip}-th query is answered with an empty truncated (TC) reply the
 *     size of the query, so a real client retries over TCP, and the others are dropped; 0 drops them all, 1
 *     truncates them all (default 2, as BIND's RRL)
 * @param rrlResponsesPerSecond RRL per response (as BIND's {@code responses-per-second}): UDP replies per second to
 *     one source prefix for one question (the same name and type), burst as many; 0 turns this limit off (default
 *     50). A reflection attack repeats one question at a spoofed victim: this bounds what the victim's prefix gets
 * @param rrlIpv4Prefix the prefix length that makes IPv4 sources one for RRL (default 24, as BIND)
 * @param rrlIpv6Prefix the prefix length that makes IPv6 sources one for RRL (default 56, as BIND)
 * @param rrlExempt sources that RRL never limits, such as the cluster's own resolvers (default none)
 * @param udpThreads threads receiving and answering UDP queries on the one socket (default 2)
 * @param maxTcpConnections TCP connections served at once; one more is closed at once (default 64)
 * @param tcpPerSource TCP connections served at once from one source address; one more is closed at accept, so a
 *     few slow clients cannot hold every connection (default 4)
 * @param tcpIdleTimeout a TCP connection with no query for this long is closed (default 10 s, RFC 7766)
 * @param tcpDeadline a TCP connection is closed this long after it was accepted, whatever it is doing, so a client
 *     that trickles bytes under the idle timeout cannot hold it (default 5 s)
 * @param servicesRefresh how often the namespaces' keys are read again (keys only) as a check of the watch that finds
 *     new services and services gone as they happen ({@link dev.muster.etcd.ServiceDirectory}); changes within a
 *     known service come from its cache at once (default 5 min, at least 1 s)
 * @param maxUdpPayload the largest UDP reply, whatever a query's EDNS0 payload size asks (default 1232, the DNS
 *     flag day value); a query without EDNS0 gets at most 512
 * @param maxStale bounded staleness: while a service's cache is stale (etcd unreachable), its names are answered
 *     from the last set for at most this long, then with SERVFAIL until etcd answers (FAIL_CLOSED; the gateway cannot
 *     keep failing endpoints out: it sees no calls); null answers for the whole outage (default null)
 * @param trustedKeys answer only with records signed by one of these keys (for their service): an unsigned, forged
 *     or otherwise signed record is excluded by the service's cache and never answered (default none: records are
 *     not checked)
 * @param allowFrom the sources answered; any other gets REFUSED over UDP (rate limited as any reply) and its TCP
 *     connection closed at accept (default none: every source is answered)
 * @param txtMetadata the instance metadata keys an instance's TXT record carries as {@code key=value}; {@code *}
 *     carries all of them. The other TXT strings (version, zone, region, weight, tags) and the {@code _muster-status}
 *     TXT stay. Default none: anyone who reaches the port would read what etcd's roles may keep from them
 * @param minimalAny answer a question of type ANY with one {@code HINFO "RFC8482" ""} record (RFC 8482), never the
 *     full set at the name (default true). False restores the full set of issue 17, an amplification vector; it
 *     exists for the bench's before-and-after rows and has no command-line option
 */
public record DnsConfig(
    InetSocketAddress listen,
    String domain,
    List<String> namespaces,
    Duration ttl,
    Duration staleTtl,
    String zone,
    int rateLimit,
    int rateBurst,
    int slip,
    int rrlResponsesPerSecond,
    int rrlIpv4Prefix,
    int rrlIpv6Prefix,
    List<Cidr> rrlExempt,
    int udpThreads,
    int maxTcpConnections,
    int tcpPerSource,
    Duration tcpIdleTimeout,
    Duration tcpDeadline,
    Duration servicesRefresh,
    int maxUdpPayload,
    Duration maxStale,
    List<TrustedKey> trustedKeys,
    List<Cidr> allowFrom,
    List<String> txtMetadata,
    boolean minimalAny) {

  /** The longest TTL accepted: a day (longer would defeat a registry's point). */
  public static final Duration MAX_TTL = Duration.ofDays(1);

  public DnsConfig {
    Objects.requireNonNull(listen, "listen");
    trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
    rrlExempt = rrlExempt == null ? List.of() : List.copyOf(rrlExempt);
    allowFrom = allowFrom == null ? List.of() : List.copyOf(allowFrom);
    txtMetadata = txtMetadata == null ? List.of() : txtMetadata.stream().map(String::trim).distinct().toList();
    for (String key : txtMetadata) {
      if (key.isEmpty() || key.indexOf('=') >= 0) {
        throw new InvalidInputException("txtMetadata", key, "use metadata keys without '=' (such as team,protocol),"
            + " or * for every key");
      }
    }
    if (maxStale != null && (maxStale.isZero() || maxStale.isNegative())) {
      throw new InvalidInputException("maxStale", maxStale, "use a positive duration such as 30s, or none to answer"
          + " for the whole outage");
    }
    domain = normalizeDomain(domain);
    if (namespaces == null || namespaces.isEmpty()) {
      throw new InvalidInputException("namespaces", namespaces, "serve at least one namespace");
    }
    namespaces = namespaces.stream().distinct().toList();
    namespaces.forEach(ns -> Names.requireValid("namespace", ns));
    ttl = ttl("ttl", ttl);
    staleTtl = ttl("staleTtl", staleTtl);
    if (zone != null) {
      Names.requireValid("zone", zone);
    }
    atLeast("rateLimit", rateLimit, 0);
    atLeast("rateBurst", rateBurst, 1);
    atLeast("slip", slip, 0);
    atLeast("rrlResponsesPerSecond", rrlResponsesPerSecond, 0);
    if (rrlIpv4Prefix < 8 || rrlIpv4Prefix > 32) {
      throw new InvalidInputException("rrlIpv4Prefix", rrlIpv4Prefix, "use 8 to 32 (BIND's default is 24)");
    }
    if (rrlIpv6Prefix < 16 || rrlIpv6Prefix > 128) {
      throw new InvalidInputException("rrlIpv6Prefix", rrlIpv6Prefix, "use 16 to 128 (BIND's default is 56)");
    }
    atLeast("udpThreads", udpThreads, 1);
    atLeast("maxTcpConnections", maxTcpConnections, 1);
    atLeast("tcpPerSource", tcpPerSource, 1);
    positive("tcpIdleTimeout", tcpIdleTimeout);
    positive("tcpDeadline", tcpDeadline);
    if (servicesRefresh == null || servicesRefresh.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new InvalidInputException("servicesRefresh", servicesRefresh, "use 1s or more, such as 5m: new services"
          + " are seen at once by the watch; this only paces its check");
    }
    if (maxUdpPayload < 512 || maxUdpPayload > 65_535) {
      throw new InvalidInputException("maxUdpPayload", maxUdpPayload, "use 512 to 65535 bytes");
    }
  }

  public static DnsConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.listen = listen;
    b.domain = domain;
    b.namespaces = namespaces;
    b.ttl = ttl;
    b.staleTtl = staleTtl;
    b.zone = zone;
    b.rateLimit = rateLimit;
    b.rateBurst = rateBurst;
    b.slip = slip;
    b.rrlResponsesPerSecond = rrlResponsesPerSecond;
    b.rrlIpv4Prefix = rrlIpv4Prefix;
    b.rrlIpv6Prefix = rrlIpv6Prefix;
    b.rrlExempt = rrlExempt;
    b.udpThreads = udpThreads;
    b.maxTcpConnections = maxTcpConnections;
    b.tcpPerSource = tcpPerSource;
    b.tcpIdleTimeout = tcpIdleTimeout;
    b.tcpDeadline = tcpDeadline;
    b.allowFrom = allowFrom;
    b.txtMetadata = txtMetadata;
    b.minimalAny = minimalAny;
    b.servicesRefresh = servicesRefresh;
    b.maxUdpPayload = maxUdpPayload;
    b.trustedKeys = trustedKeys;
    b.maxStale = maxStale;
    return b;
  }

  /** {@code Muster.} and {@code muster} both become {@code muster.}; each label must be a DNS label. */
  private static String normalizeDomain(String domain) {
    String d = domain == null ? "" : domain.trim().toLowerCase(Locale.ROOT);
    if (d.endsWith(".")) {
      d = d.substring(0, d.length() - 1);
    }
    String rule = "use a domain of DNS labels (a-z, 0-9, '-', each 1-63 characters) such as muster. or"
        + " svc.example.com.";
    if (d.isEmpty() || d.length() > 200) {
      throw new InvalidInputException("domain", domain, rule);
    }
    for (String label : d.split("\\.", -1)) {
      if (!Names.isValid(label)) {
        throw new InvalidInputException("domain", domain, rule);
      }
    }
    return d + ".";
  }

  private static Duration ttl(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.compareTo(MAX_TTL) > 0 || d.toMillis() % 1000 != 0) {
      throw new InvalidInputException(field, d, "use whole seconds from 0s to 1d (DNS TTLs are in seconds)");
    }
    return d;
  }

  private static void positive(String field, Duration d) {
    Objects.requireNonNull(d, field);
    if (d.isNegative() || d.isZero()) {
      throw new InvalidInputException(field, d, "use a positive duration");
    }
  }

  private static void atLeast(String field, int value, int min) {
    if (value < min) {
      throw new InvalidInputException(field, value, "use " + min + " or more");
    }
  }

  /** Builds a {@link DnsConfig}; see the record's parameters for each default. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 8053);
    private String domain = "muster.";
    private List<String> namespaces = List.of("default");
    private Duration ttl = Duration.ofSeconds(5);
    private Duration staleTtl = Duration.ZERO;
    private String zone;
    private int rateLimit = 1000;
    private int rateBurst = 1000;
    private int slip = 2;
    private int rrlResponsesPerSecond = 50;
    private int rrlIpv4Prefix = 24;
    private int rrlIpv6Prefix = 56;
    private List<Cidr> rrlExempt = List.of();
    private int udpThreads = 2;
    private int maxTcpConnections = 64;
    private int tcpPerSource = 4;
    private Duration tcpIdleTimeout = Duration.ofSeconds(10);
    private Duration tcpDeadline = Duration.ofSeconds(5);
    private List<Cidr> allowFrom = List.of();
    private List<String> txtMetadata = List.of();
    private boolean minimalAny = true;
    private Duration servicesRefresh = dev.muster.etcd.ServiceDirectory.DEFAULT_RELIST;
    private int maxUdpPayload = 1232;
    private List<TrustedKey> trustedKeys = List.of();
    private Duration maxStale;

    private Builder() {}

    public Builder listen(InetSocketAddress listen) {
      this.listen = listen;
      return this;
    }

    public Builder domain(String domain) {
      this.domain = domain;
      return this;
    }

    public Builder namespaces(List<String> namespaces) {
      this.namespaces = namespaces == null ? null : List.copyOf(namespaces);
      return this;
    }

    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    public Builder staleTtl(Duration staleTtl) {
      this.staleTtl = staleTtl;
      return this;
    }

    public Builder zone(String zone) {
      this.zone = zone;
      return this;
    }

    /**
     * RRL per source prefix: {@code perSecond} replies to one prefix, {@code burst} more at once; {@code perSecond} 0
     * is no limit.
     */
    public Builder rateLimit(int perSecond, int burst) {
      this.rateLimit = perSecond;
      this.rateBurst = burst;
      return this;
    }

    public Builder slip(int slip) {
      this.slip = slip;
      return this;
    }

    /** RRL per response: replies per second to one prefix for one name and type (0: no limit). */
    public Builder rrlResponsesPerSecond(int perSecond) {
      this.rrlResponsesPerSecond = perSecond;
      return this;
    }

    /** The prefix lengths that make sources one for RRL (IPv4, IPv6). */
    public Builder rrlPrefixes(int ipv4, int ipv6) {
      this.rrlIpv4Prefix = ipv4;
      this.rrlIpv6Prefix = ipv6;
      return this;
    }

    public Builder rrlExempt(List<Cidr> exempt) {
      this.rrlExempt = exempt;
      return this;
    }

    public Builder tcpPerSource(int tcpPerSource) {
      this.tcpPerSource = tcpPerSource;
      return this;
    }

    public Builder tcpDeadline(Duration tcpDeadline) {
      this.tcpDeadline = tcpDeadline;
      return this;
    }

    /** Answer only these sources (none: everyone). */
    public Builder allowFrom(List<Cidr> allowFrom) {
      this.allowFrom = allowFrom;
      return this;
    }

    /** The metadata keys TXT records carry ({@code *}: all; none: no metadata). */
    public Builder txtMetadata(List<String> keys) {
      this.txtMetadata = keys;
      return this;
    }

    /** False answers ANY with the full set at the name (issue 17's behaviour, for the bench's before row). */
    public Builder minimalAny(boolean minimalAny) {
      this.minimalAny = minimalAny;
      return this;
    }

    public Builder udpThreads(int udpThreads) {
      this.udpThreads = udpThreads;
      return this;
    }

    public Builder maxTcpConnections(int maxTcpConnections) {
      this.maxTcpConnections = maxTcpConnections;
      return this;
    }

    public Builder tcpIdleTimeout(Duration tcpIdleTimeout) {
      this.tcpIdleTimeout = tcpIdleTimeout;
      return this;
    }

    public Builder servicesRefresh(Duration servicesRefresh) {
      this.servicesRefresh = servicesRefresh;
      return this;
    }

    public Builder maxUdpPayload(int maxUdpPayload) {
      this.maxUdpPayload = maxUdpPayload;
      return this;
    }

    /** Past {@code maxStale} of a service's cache being stale, its names answer SERVFAIL (null: never). */
    public Builder maxStale(Duration maxStale) {
      this.maxStale = maxStale;
      return this;
    }

    /** Answer only with records signed by one of {@code keys} (none: not checked). */
    public Builder trustedKeys(List<TrustedKey> keys) {
      this.trustedKeys = keys;
      return this;
    }

    public DnsConfig build() {
      return new DnsConfig(listen, domain, namespaces, ttl, staleTtl, zone, rateLimit, rateBurst, slip,
          rrlResponsesPerSecond, rrlIpv4Prefix, rrlIpv6Prefix, rrlExempt, udpThreads, maxTcpConnections, tcpPerSource,
          tcpIdleTimeout, tcpDeadline, servicesRefresh, maxUdpPayload, maxStale, trustedKeys, allowFrom, txtMetadata,
          minimalAny);
    }
  }
}
