package dev.muster.dns.internal;

import java.util.concurrent.atomic.LongAdder;

/** The gateway's counters: incremented by the serving threads, read by whoever asks. Thread-safe. */
public final class DnsCounters {
  public final LongAdder queries = new LongAdder();
  public final LongAdder answered = new LongAdder();
  public final LongAdder nodata = new LongAdder();
  public final LongAdder nxdomain = new LongAdder();
  public final LongAdder refused = new LongAdder();
  public final LongAdder formerr = new LongAdder();
  public final LongAdder notimp = new LongAdder();
  public final LongAdder truncated = new LongAdder();
  public final LongAdder dropped = new LongAdder();
  public final LongAdder rateLimited = new LongAdder();
  public final LongAdder slipped = new LongAdder();
  public final LongAdder tcpConnections = new LongAdder();
  public final LongAdder tcpRefused = new LongAdder();
  public final LongAdder errors = new LongAdder();
  /** SERVFAIL answers: a service's cache stale past {@code maxStale} (FAIL_CLOSED). */
  public final LongAdder staleRefused = new LongAdder();
  /** Queries from a source outside {@code allowFrom}, refused (UDP) or connections closed at accept (TCP). */
  public final LongAdder notAllowed = new LongAdder();
  /** ANY questions answered with RFC 8482's one HINFO. */
  public final LongAdder minimalAny = new LongAdder();
  /** TCP connections closed at accept: their source had {@code tcpPerSource} open already. */
  public final LongAdder tcpPerSourceRefused = new LongAdder();
  /** TCP connections closed at their total deadline. */
  public final LongAdder tcpDeadlineClosed = new LongAdder();
  /** UDP bytes received and sent (queries, replies): their ratio is the amplification a spoofer gets. */
  public final LongAdder udpBytesIn = new LongAdder();
  public final LongAdder udpBytesOut = new LongAdder();

  /** The question types counted apart; every other type counts as {@code other}. */
  public static final java.util.List<String> TYPES = java.util.List.of("A", "AAAA", "SRV", "PTR", "TXT", "ANY", "SOA",
      "other");
  /** What a reply said. */
  public static final java.util.List<String> RESULTS = java.util.List.of("answered", "nodata", "nxdomain", "refused",
      "servfail", "formerr", "notimp");
  private final LongAdder[] byTypeAndResult = new LongAdder[TYPES.size() * RESULTS.size()];

  public DnsCounters() {
    for (int i = 0; i < byTypeAndResult.length; i++) {
      byTypeAndResult[i] = new LongAdder();
    }
  }

  /** One reply to a question of {@code qtype} (dnsjava's), by its rcode and whether it had answers. */
  public void replied(int qtype, int rcode, boolean answers) {
    String t = qtype < 0 || qtype > 0xFFFF ? "other" : org.xbill.DNS.Type.string(qtype);
    int type = TYPES.indexOf(t);
    int result = switch (rcode) {
      case org.xbill.DNS.Rcode.NOERROR -> answers ? 0 : 1;
      case org.xbill.DNS.Rcode.NXDOMAIN -> 2;
      case org.xbill.DNS.Rcode.REFUSED -> 3;
      case org.xbill.DNS.Rcode.SERVFAIL -> 4;
      case org.xbill.DNS.Rcode.NOTIMP -> 6;
      default -> 5; // FORMERR, BADVERS
    };
    byTypeAndResult[(type < 0 ? TYPES.size() - 1 : type) * RESULTS.size() + result].increment();
  }

  /** Replies to questions of {@code type} (one of {@link #TYPES}) that said {@code result} (one of {@link #RESULTS}). */
  public long replies(String type, String result) {
    return byTypeAndResult[TYPES.indexOf(type) * RESULTS.size() + RESULTS.indexOf(result)].sum();
  }
}
