package dev.muster.registry;

import dev.muster.sign.SigningKey;
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
 * @param maxFailures give up (state FAILED) after this many consecutive failed keepalives; 0 = retry forever
 * @param startTimeout how long {@code register()} keeps trying to reach etcd before it throws
 *     {@link dev.muster.RegistryUnavailableException} (default 10 s)
 * @param requestTimeout deadline of each etcd call, at most the keepalive interval (default 2 s, or the keepalive
 *     interval when that is shorter)
 * @param retryBase first retry delay after a failed keepalive; doubles up to the keepalive interval, full jitter
 *     (default 100 ms)
 * @param shutdownHook close (drain, revoke) on JVM shutdown, e.g. SIGTERM (default true)
 * @param signingKey sign every value put (registration, update, DRAINING, re-registration) for its key and lease
 *     ({@link dev.muster.sign.RecordSignature}); null puts unsigned values (default null)
 * @param signatureValidity how long a signed value may be served: each signature's {@code notAfter} is this far
 *     ahead, and the registrar puts its value again, freshly signed, once half of it has passed (at a keepalive), so
 *     a record whose lease someone else keeps alive stops being served within this time after its provider died. At
 *     least 1 min and 4 × the TTL (default the larger of 10 min and 4 × the TTL)
 * @param signV1Too also write Muster 0.1's signature, for consumers not yet upgraded (default false; see
 *     {@link dev.muster.sign.RecordSignature})
 * @param leaseAhead let the registry grant the lease of the next registration with this TTL ahead of time, so that
 *     {@code register()} is one etcd commit (its put) instead of two (grant, then put). The registry keeps at most
 *     one idle lease per TTL, granted after each first registration with that TTL and replaced in the background
 *     after each use; it has no key, expires by itself when nobody uses it, and is revoked when the registry
 *     closes. A re-registration after a lost lease never uses it (default true)
 * @param sharedLease put this registration's key on a lease the registry shares among its registrations with this
 *     setting and the same TTL, as a ZooKeeper session or a Consul agent does, instead of a lease of its own. A
 *     registration is then one etcd commit (its put) even in a burst, and the registry renews one lease per TTL
 *     however many registrations use it. The price: a lost lease takes every registration on it down at once (each
 *     registers again on a new shared lease), and {@code close()} deletes the key by itself (only if it is still
 *     this registration's write) where a lease of its own would be revoked; the shared lease is revoked when its
 *     last registration closes. The same id registered twice on one registry is refused as without it (default
 *     false: a lease per registration, SPEC §3)
 */
public record RegistrarConfig(
    Duration ttl,
    Duration keepaliveInterval,
    Duration drain,
    int maxFailures,
    Duration startTimeout,
    Duration requestTimeout,
    Duration retryBase,
    boolean shutdownHook,
    SigningKey signingKey,
    Duration signatureValidity,
    boolean signV1Too,
    boolean leaseAhead,
    boolean sharedLease) {

  /** etcd refuses leases shorter than this (its minimum TTL). */
  public static final Duration MIN_TTL = Duration.ofSeconds(2);
  /** The shortest {@link #signatureValidity()} allowed. */
  public static final Duration MIN_SIGNATURE_VALIDITY = Duration.ofMinutes(1);

  public RegistrarConfig {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(keepaliveInterval, "keepaliveInterval");
    Objects.requireNonNull(drain, "drain");
    Objects.requireNonNull(startTimeout, "startTimeout");
    Objects.requireNonNull(requestTimeout, "requestTimeout");
    Objects.requireNonNull(retryBase, "retryBase");
    Objects.requireNonNull(signatureValidity, "signatureValidity");
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
    if (requestTimeout.compareTo(keepaliveInterval) > 0) {
      throw invalid("requestTimeout", requestTimeout, "use at most the keepalive interval ("
          + format(keepaliveInterval) + "): a keepalive must end before the next is due");
    }
    if (retryBase.isNegative() || retryBase.isZero()) {
      throw invalid("retryBase", retryBase, "use a positive duration");
    }
    if (signatureValidity.compareTo(MIN_SIGNATURE_VALIDITY) < 0
        || signatureValidity.compareTo(ttl.multipliedBy(4)) < 0 || signatureValidity.toMillis() % 1000 != 0) {
      throw invalid("signatureValidity", signatureValidity, "use whole seconds, at least 1 min and 4 × the TTL ("
          + format(ttl.multipliedBy(4)) + ")");
    }
  }

  private static dev.muster.InvalidInputException invalid(String field, Object value, String allowed) {
    return new dev.muster.InvalidInputException(field, value instanceof Duration d ? format(d) : value, allowed);
  }

  private static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** TTL 15 s, keepalive 5 s, drain 10 s, request timeout 2 s, retry forever, values unsigned, lease ahead. */
  public static RegistrarConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder holding this config's values. A value equal to what the builder would derive (keepalive TTL/3, drain
   * 2 × keepalive, request timeout the smaller of 2 s and the keepalive) is left derived, so changing the TTL on
   * {@code defaults().toBuilder()} moves it too; a value that differs from its derivation was set on purpose and is
   * kept. (A record does not remember how it was built; a value equal to its derivation cannot be told apart.)
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.ttl = ttl;
    Duration derivedKeepalive = Builder.keepaliveFor(ttl);
    b.keepaliveInterval = keepaliveInterval.equals(derivedKeepalive) ? null : keepaliveInterval;
    b.drain = drain.equals(Builder.drainFor(keepaliveInterval)) ? null : drain;
    b.requestTimeout = requestTimeout.equals(Builder.requestTimeoutFor(keepaliveInterval)) ? null : requestTimeout;
    b.maxFailures = maxFailures;
    b.startTimeout = startTimeout;
    b.retryBase = retryBase;
    b.shutdownHook = shutdownHook;
    b.signingKey = signingKey;
    b.signatureValidity = signatureValidity.equals(Builder.signatureValidityFor(ttl)) ? null : signatureValidity;
    b.signV1Too = signV1Too;
    b.leaseAhead = leaseAhead;
    b.sharedLease = sharedLease;
    return b;
  }

  /**
   * Builds a {@link RegistrarConfig}. Unset keepalive, drain and request timeout are derived (TTL/3, 2 × keepalive,
   * the smaller of 2 s and the keepalive); a value set explicitly is used as given, and one that does not fit is
   * refused with {@link dev.muster.InvalidInputException}, never adjusted.
   */
  public static final class Builder {
    private static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(2);

    private Duration ttl = Duration.ofSeconds(15);
    private Duration keepaliveInterval;
    private Duration drain;
    private int maxFailures;
    private Duration startTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout;
    private Duration retryBase = Duration.ofMillis(100);
    private boolean shutdownHook = true;
    private SigningKey signingKey;
    private Duration signatureValidity;
    private boolean signV1Too;
    private boolean leaseAhead = true;
    private boolean sharedLease;

    private Builder() {}

    static Duration keepaliveFor(Duration ttl) {
      return ttl.dividedBy(3);
    }

    static Duration drainFor(Duration keepalive) {
      return keepalive.multipliedBy(2);
    }

    static Duration signatureValidityFor(Duration ttl) {
      Duration tenMinutes = Duration.ofMinutes(10);
      return ttl.multipliedBy(4).compareTo(tenMinutes) > 0 ? ttl.multipliedBy(4) : tenMinutes;
    }

    static Duration requestTimeoutFor(Duration keepalive) {
      return keepalive.compareTo(DEFAULT_REQUEST_TIMEOUT) < 0 ? keepalive : DEFAULT_REQUEST_TIMEOUT;
    }

    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    /** Time between keepalives; {@code null} derives it again (TTL/3). */
    public Builder keepaliveInterval(Duration keepaliveInterval) {
      this.keepaliveInterval = keepaliveInterval;
      return this;
    }

    /** How long to stay DRAINING on close; {@code null} derives it again (2 × keepalive). */
    public Builder drain(Duration drain) {
      this.drain = drain;
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

    /** Deadline of each etcd call, at most the keepalive; {@code null} derives it again (2 s or the keepalive). */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    public Builder retryBase(Duration retryBase) {
      this.retryBase = retryBase;
      return this;
    }

    public Builder shutdownHook(boolean shutdownHook) {
      this.shutdownHook = shutdownHook;
      return this;
    }

    /** Signs every value this registrar puts; null (the default) puts them unsigned. */
    public Builder signingKey(SigningKey signingKey) {
      this.signingKey = signingKey;
      return this;
    }

    /**
     * How long a signed value may be served; {@code null} derives it again (the larger of 10 min and 4 × the TTL; see
     * the record).
     */
    public Builder signatureValidity(Duration signatureValidity) {
      this.signatureValidity = signatureValidity;
      return this;
    }

    /** Also write Muster 0.1's signature, during an upgrade (default false; see the record). */
    public Builder signV1Too(boolean signV1Too) {
      this.signV1Too = signV1Too;
      return this;
    }

    /** Whether the registry may grant this registration's lease ahead of time (default true; see the record). */
    public Builder leaseAhead(boolean leaseAhead) {
      this.leaseAhead = leaseAhead;
      return this;
    }

    /** Whether the key goes on the registry's shared lease (default false; see the record). */
    public Builder sharedLease(boolean sharedLease) {
      this.sharedLease = sharedLease;
      return this;
    }

    public RegistrarConfig build() {
      Objects.requireNonNull(ttl, "ttl");
      Duration keepalive = keepaliveInterval != null ? keepaliveInterval : keepaliveFor(ttl);
      Duration d = drain != null ? drain : drainFor(keepalive);
      Duration request = requestTimeout != null ? requestTimeout : requestTimeoutFor(keepalive);
      Duration validity = signatureValidity != null ? signatureValidity : signatureValidityFor(ttl);
      return new RegistrarConfig(ttl, keepalive, d, maxFailures, startTimeout, request, retryBase, shutdownHook,
          signingKey, validity, signV1Too, leaseAhead, sharedLease);
    }
  }
}
