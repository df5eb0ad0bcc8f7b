package dev.muster.registry;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * Something that happened to a {@link Registration}. {@code lease} is the lease id involved (0 when none),
 * {@code revision} the etcd revision of the write that caused it (0 when there was no write), {@code detail} a
 * short human explanation (may be empty), {@code ttl} the lease's TTL as of this event — the TTL asked for at a
 * (re)registration, the TTL etcd reported at a keepalive (etcd may grant more, e.g. after a restart) — or
 * {@link Duration#ZERO} when the event says nothing about it. Read the TTL here, never out of {@code detail}.
 */
public record RegistrationEvent(Type type, Instant ts, String id, long lease, long revision, String detail,
    Duration ttl) {
  /** The event kinds; {@link #wireName()} is what {@code muster register} prints. */
  public enum Type {
    /** First registration succeeded. */
    REGISTERED("registered"),
    /** A keepalive succeeded (reported only for the lab's {@code RegistrarControls}); {@link #ttl()}: etcd's. */
    KEEPALIVE("keepalive"),
    /** A keepalive failed because etcd could not be reached; the lease may survive. */
    UNREACHABLE("unreachable"),
    /** A keepalive succeeded again on the same lease after {@link #UNREACHABLE}. */
    RECONNECTED("reconnected"),
    /** etcd answered that the lease has expired or was revoked. */
    LEASE_LOST("lease_lost"),
    /** Registered again under a new lease after {@link #LEASE_LOST}. */
    REREGISTERED("reregistered"),
    /** The value was changed with {@link Registration#update}. */
    UPDATED("updated"),
    /** Closing or draining: state DRAINING was published and the drain period started. */
    DRAINING("draining"),
    /** A {@link Registration#drain()} ended: the key stays DRAINING, its lease alive, until the close. */
    DRAINED("drained"),
    /** The lease was revoked: the key is gone. */
    REVOKED("revoked"),
    /** The registrar stopped trying (see {@code detail}). */
    FAILED("failed");

    private final String wireName;

    Type(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }
  }

  public RegistrationEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(ts, "ts");
    Objects.requireNonNull(id, "id");
    detail = detail == null ? "" : detail;
    ttl = ttl == null ? Duration.ZERO : ttl;
  }

  /** An event that says nothing about the lease's TTL. */
  public RegistrationEvent(Type type, Instant ts, String id, long lease, long revision, String detail) {
    this(type, ts, id, lease, revision, detail, Duration.ZERO);
  }
}
