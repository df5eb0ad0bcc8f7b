package dev.muster.sign;

import dev.muster.ErrorCode;
import dev.muster.MusterException;
import java.util.Objects;

/**
 * An instance record that a consumer with trusted keys must not serve: it carries no signature, a signature of the
 * wrong shape or of Muster 0.1's format, one by a key that is not trusted for its service, one that does not match
 * its key, lease and value (tampered, copied to another key or lease, or forged), one that has expired, or one older
 * than a record the consumer already accepted for the key (replayed). The one-line message names the etcd key, the lease
 * and the reason, e.g. {@code record /muster/default/orders/v1/x on lease 7587... is not verified: signed by key
 * 5b58f33094e0ab5e, which is not trusted for default/orders (trusted: 0c1d...)}.
 *
 * <p>Endpoint caches exclude such records from their set and count them
 * ({@link dev.muster.cache.EndpointCache#unverifiedCount()}); they never stop a cache. Code
 * {@link ErrorCode#INVALID_INPUT}.
 */
public class UnverifiedRecordException extends MusterException {
  /** Why a record did not verify. */
  public enum Reason {
    /** No {@code sig} member. */
    UNSIGNED,
    /** A {@code sig} member that is not {@code {"kid": ..., "ed25519": base64 of 64 bytes}}. */
    MALFORMED_SIGNATURE,
    /** Signed by a key id that is not trusted for the record's service. */
    UNKNOWN_KEY,
    /** The signature does not match the key, the lease and the value under the named trusted key. */
    BAD_SIGNATURE,
    /** Only a version 1 signature (Muster 0.1): no sequence, no expiry. */
    OLD_FORMAT,
    /** A valid signature whose {@code notAfter} has passed. */
    EXPIRED,
    /** A valid signature whose sequence is below the highest one this consumer accepted for the key. */
    REPLAYED
  }

  private final String key;
  private final Reason reason;

  public UnverifiedRecordException(String key, long lease, Reason reason, String problem) {
    super(ErrorCode.INVALID_INPUT, "record " + Objects.requireNonNull(key, "key") + " on lease " + lease
        + " is not verified: " + Objects.requireNonNull(problem, "problem"), null);
    this.key = key;
    this.reason = Objects.requireNonNull(reason, "reason");
  }

  /** The record's etcd key. */
  public String key() {
    return key;
  }

  public Reason reason() {
    return reason;
  }
}
