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
}
