package dev.muster;

import java.time.Duration;
import java.util.Objects;

/**
 * Registration refused because the instance key already exists under another lease (SPEC §3, "register"). The
 * message names the key, the holder's lease id (in hex, as {@code etcdctl lease timetolive} takes it) and its
 * remaining TTL, and says what to do.
 *
 * <p>Code {@link ErrorCode#DUPLICATE_INSTANCE}.
 */
public class DuplicateInstanceException extends MusterException {
  private final String key;
  private final long holderLease;
  private final Duration holderTtl;

  /**
   * @param key the full etcd key, e.g. {@code /muster/default/orders/v1/host-8080-a1b2c3}
   * @param holderLease the lease id the key is attached to
   * @param holderTtl the holder lease's remaining time to live; negative when etcd no longer knows the lease
   */
  public DuplicateInstanceException(String key, long holderLease, Duration holderTtl) {
    super(ErrorCode.DUPLICATE_INSTANCE, message(key, holderLease, holderTtl));
    this.key = key;
    this.holderLease = holderLease;
    this.holderTtl = holderTtl;
  }

  /** The full etcd key that is already taken. */
  public String key() {
    return key;
  }

  /** The id of the lease that holds the key. */
  public long holderLease() {
    return holderLease;
  }

  /** The holder lease's remaining TTL when the registration was refused; negative if it had already expired. */
  public Duration holderTtl() {
    return holderTtl;
  }

  private static String message(String key, long lease, Duration ttl) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(ttl, "holderTtl");
    String left = ttl.isNegative() ? "expiring now" : Messages.duration(ttl) + " left";
    return "instance key " + Messages.quote(key) + " is already registered under lease " + Long.toHexString(lease)
        + " (" + left + "): choose another instance id, or stop the other provider and retry after its lease expires";
  }
}
