package dev.muster.registry;

import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link Registration} has done so far, for metrics: keepalives etcd answered and their total round trip,
 * leases lost, re-registrations after one, and drains begun (by {@code drain()} or a close). Immutable; a snapshot.
 */
public record RegistrationStats(long keepalives, Duration keepaliveTime, long leaseLosses, long reregistrations,
    long drains) {
  /** Nothing done yet (a registration that keeps no counts). */
  public static final RegistrationStats NONE = new RegistrationStats(0, Duration.ZERO, 0, 0, 0);

  public RegistrationStats {
    Objects.requireNonNull(keepaliveTime, "keepaliveTime");
  }
}
