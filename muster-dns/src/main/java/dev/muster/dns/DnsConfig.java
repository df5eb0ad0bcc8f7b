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
 * @param rateLimit UDP queries per second accepted from one source (an IPv4 address, an IPv6 /64); 0 turns the
 *     limit off (default 1000)
 * @param rateBurst how many queries above the rate one source may send at once (default 1000)
 * @param slip over the limit, every {@code slip}-th query is answered with an empty truncated (TC) reply, so a real
 *     client retries over TCP, and the others are dropped; 0 drops them all (default 2, as BIND's RRL)
 * @param udpThreads threads receiving and answering UDP queries on the one socket (default 2)
 * @param maxTcpConnections TCP connections served at once; one more is closed at once (default 64)
 * @param tcpIdleTimeout a TCP connection with no query for this long is closed (default 10 s, RFC 7766)
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
    int udpThreads,
    int maxTcpConnections,
    Duration tcpIdleTimeout,
    Duration servicesRefresh,
    int maxUdpPayload,
    Duration maxStale,
    List<TrustedKey> trustedKeys) {

  /** The longest TTL accepted: a day (longer would defeat a registry's point). */
  public static final Duration MAX_TTL = Duration.ofDays(1);

  public DnsConfig {
    Objects.requireNonNull(listen, "listen");
    trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
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
    atLeast("udpThreads", udpThreads, 1);
    atLeast("maxTcpConnections", maxTcpConnections, 1);
    positive("tcpIdleTimeout", tcpIdleTimeout);
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
    b.udpThreads = udpThreads;
    b.maxTcpConnections = maxTcpConnections;
    b.tcpIdleTimeout = tcpIdleTimeout;
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
    private int udpThreads = 2;
    private int maxTcpConnections = 64;
    private Duration tcpIdleTimeout = Duration.ofSeconds(10);
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

    /** {@code perSecond} queries from one source, {@code burst} more at once; {@code perSecond} 0 is no limit. */
    public Builder rateLimit(int perSecond, int burst) {
      this.rateLimit = perSecond;
      this.rateBurst = burst;
      return this;
    }

    public Builder slip(int slip) {
      this.slip = slip;
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
      return new DnsConfig(listen, domain, namespaces, ttl, staleTtl, zone, rateLimit, rateBurst, slip, udpThreads,
          maxTcpConnections, tcpIdleTimeout, servicesRefresh, maxUdpPayload, maxStale, trustedKeys);
    }
  }
}
