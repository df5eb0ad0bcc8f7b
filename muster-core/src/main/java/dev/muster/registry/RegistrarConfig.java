package dev.muster.registry;

import java.time.Duration;
import java.util.Objects;

/**
 * How a registrar keeps its lease (SPEC §3). Immutable; {@link #defaults()} are the production values,
 * {@link #builder()} / {@link #toBuilder()} change them.
 *
 * @param ttl lease time-to-live; etcd's minimum is 2 s (default 15 s)
 * @param keepaliveInterval time between keepalives, on the monotonic clock (default ttl/3)
 * @param drain how long to stay registered as DRAINING before revoking on close (default 2 × keepalive; 0 revokes
 *     at once and does not publish DRAINING)
 * @param reregister re-register with a new lease when the lease is lost (default true; false is the lab's
 *     negative control, which keeps renewing the dead lease id)
 * @param maxFailures give up (state FAILED) after this many consecutive failed keepalives; 0 = retry forever
 * @param startTimeout how long {@code register()} keeps trying to reach etcd before it throws
 *     {@link dev.muster.RegistryUnavailableException} (default 10 s)
 * @param requestTimeout deadline of each etcd call (default 2 s, at most the keepalive interval)
 * @param retryBase first retry delay after a failed keepalive; doubles up to the keepalive interval, full jitter
 *     (default 100 ms)
 * @param shutdownHook close (drain, revoke) on JVM shutdown, e.g. SIGTERM (default true)
 * @param reportKeepalives also report every successful keepalive as an event (default false; the lab uses it to
 *     know when each lease would have expired)
 */
public record RegistrarConfig(
    Duration ttl,
    Duration keepaliveInterval,
    Duration drain,
    boolean reregister,
    int maxFailures,
    Duration startTimeout,
    Duration requestTimeout,
    Duration retryBase,
    boolean shutdownHook,
    boolean reportKeepalives) {

  /** etcd refuses leases shorter than this (its minimum TTL). */
  public static final Duration MIN_TTL = Duration.ofSeconds(2);

  public RegistrarConfig {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(keepaliveInterval, "keepaliveInterval");
    Objects.requireNonNull(drain, "drain");
    Objects.requireNonNull(startTimeout, "startTimeout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    Objects.requireNonNull(retryBase, "retryBase");
    if (ttl.compareTo(MIN_TTL) < 0) {
      throw invalid("ttl", ttl, "use at least 2s (etcd's minimum lease TTL)");
    }
    if (ttl.toMillis() % 1000 != 0) {
      throw invalid("ttl", ttl, "use whole seconds (etcd leases count seconds)");
    }
    if (keepaliveInterval.isNegative() || keepaliveInterval.isZero() || keepaliveInterval.compareTo(ttl) >= 0) {
      throw invalid("keepalive", keepaliveInterval, "use a positive duration below the TTL (" + ttl.toSeconds()
          + "s), e.g. TTL/3");
    }
    if (drain.isNegative()) {
      throw invalid("drain", drain, "use 0 or more");
    }
    if (maxFailures < 0) {
      throw invalid("maxFailures", maxFailures, "use 0 (retry forever) or more");
    }
    if (startTimeout.isNegative()) {
      throw invalid("startTimeout", startTimeout, "use 0 or more");
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw invalid("requestTimeout", requestTimeout, "use a positive duration");
    }
    if (retryBase.isNegative() || retryBase.isZero()) {
      throw invalid("retryBase", retryBase, "use a positive duration");
    }
  }

  private static dev.muster.InvalidInputException invalid(String field, Object value, String allowed) {
    return new dev.muster.InvalidInputException(field, value instanceof Duration d ? format(d) : value, allowed);
  }

  private static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** TTL 15 s, keepalive 5 s, drain 10 s, re-register on, retry forever. */
  public static RegistrarConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.ttl = ttl;
    b.keepaliveInterval = keepaliveInterval;
    b.drain = drain;
    b.reregister = reregister;
    b.maxFailures = maxFailures;
    b.startTimeout = startTimeout;
    b.requestTimeout = requestTimeout;
    b.retryBase = retryBase;
    b.shutdownHook = shutdownHook;
    b.reportKeepalives = reportKeepalives;
    return b;
  }

  /** Builds a {@link RegistrarConfig}; unset keepalive and drain follow the TTL (TTL/3 and 2 × keepalive). */
  public static final class Builder {
    private Duration ttl = Duration.ofSeconds(15);
    private Duration keepaliveInterval;
    private Duration drain;
    private boolean reregister = true;
    private int maxFailures;
    private Duration startTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofSeconds(2);
    private Duration retryBase = Duration.ofMillis(100);
    private boolean shutdownHook = true;
    private boolean reportKeepalives;

    private Builder() {}

    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    public Builder keepaliveInterval(Duration keepaliveInterval) {
      this.keepaliveInterval = keepaliveInterval;
      return this;
    }

    public Builder drain(Duration drain) {
      this.drain = drain;
      return this;
    }

    public Builder reregister(boolean reregister) {
      this.reregister = reregister;
      return this;
    }

    public Builder maxFailures(int maxFailures) {
      this.maxFailures = maxFailures;
      return this;
    }

    public Builder startTimeout(Duration startTimeout) {
      this.startTimeout = startTimeout;
      return this;
    }

    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    public Builder retryBase(Duration retryBase) {
      this.retryBase = retryBase;
      return this;
    }

    public Builder reportKeepalives(boolean report) {
      this.reportKeepalives = report;
      return this;
    }

    public Builder shutdownHook(boolean shutdownHook) {
      this.shutdownHook = shutdownHook;
      return this;
    }

    public RegistrarConfig build() {
      Objects.requireNonNull(ttl, "ttl");
      Duration keepalive = keepaliveInterval != null ? keepaliveInterval : ttl.dividedBy(3);
      Duration d = drain != null ? drain : keepalive.multipliedBy(2);
      Duration request = requestTimeout != null && requestTimeout.compareTo(keepalive) > 0 ? keepalive : requestTimeout;
      return new RegistrarConfig(ttl, keepalive, d, reregister, maxFailures, startTimeout, request, retryBase,
          shutdownHook, reportKeepalives);
    }
  }
}
