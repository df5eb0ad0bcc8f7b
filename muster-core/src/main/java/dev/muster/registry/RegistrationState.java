package dev.muster.registry;

/**
 * Where a {@link Registration} is in its life (the registrar's state machine):
 *
 * <pre>
 * ACTIVE      --keepalive ok-->                   ACTIVE
 * ACTIVE      --keepalive fails (etcd unreachable)--> UNREACHABLE (lease may still exist)
 * UNREACHABLE --keepalive ok, same lease-->       ACTIVE
 * ACTIVE/UNREACHABLE --TTL 0 / lease not found--> LEASE_LOST --re-registered--> ACTIVE
 * any         --close() / SIGTERM-->              DRAINING --drain elapsed, lease revoked--> CLOSED
 * any         --drain()-->                        DRAINING --drain elapsed--> DRAINED --close(), lease revoked--> CLOSED
 * any         --maxFailures reached / id taken on re-register--> FAILED
 * </pre>
 */
public enum RegistrationState {
  /** The key is in etcd under a lease that is being kept alive. */
  ACTIVE,
  /** Keepalives fail; the lease (and key) may still exist. Retrying with backoff. */
  UNREACHABLE,
  /** etcd says the lease is gone; re-registering (or, under the lab's negative control, renewing the dead id). */
  LEASE_LOST,
  /**
   * Closing or draining ({@link Registration#drain()}): state DRAINING is published, the drain period is running,
   * the lease is kept alive meanwhile.
   */
  DRAINING,
  /**
   * {@link Registration#drain()} has ended: consumers had the drain period to stop sending; the key stays (state
   * DRAINING) and its lease alive until {@link Registration#close()} revokes it.
   */
  DRAINED,
  /** The lease was revoked (or could not be) and the registrar stopped. */
  CLOSED,
  /** The registrar gave up: too many failures, or the id was taken while re-registering. */
  FAILED
}
