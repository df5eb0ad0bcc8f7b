package dev.muster.registry.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The lab's negative controls and probes for a registrar: switches that make a registration worse on purpose, or
 * noisier, so an experiment can show what the production behaviour prevents. Not part of {@link
 * dev.muster.registry.RegistrarConfig}: no production caller should be able to turn re-registration off. Reached
 * through an internal entry point ({@code dev.muster.etcd.internal.NegativeControls}) and the hidden options of
 * {@code muster register}.
 *
 * @param reregister re-register with a new lease when the lease is lost (production: true; false is the
 *     negative control, which keeps renewing the dead lease id — a healthy provider nobody can see)
 * @param reportKeepalives also report every successful keepalive as an event (production: false; the lab and the
 *     bench use it to know when each lease would have expired)
 * @param keepaliveObserver told how long etcd took to answer each successful keepalive (production:
 *     {@link KeepaliveObserver#NONE}; the scale bench's keepalive latency and {@code muster register
 *     --log-keepalives}' {@code answered_us} read it). Not in the public {@link dev.muster.registry.RegistrationEvent}:
 *     only these two measure it
 */
public record RegistrarControls(boolean reregister, boolean reportKeepalives, KeepaliveObserver keepaliveObserver) {
  /** What every production registration uses. */
  public static final RegistrarControls PRODUCTION = new RegistrarControls(true, false, KeepaliveObserver.NONE);

  public RegistrarControls {
    Objects.requireNonNull(keepaliveObserver, "keepaliveObserver (KeepaliveObserver.NONE for none)");
  }

  /**
   * Told of each keepalive etcd answered with a live lease, whether or not {@link #reportKeepalives} is on: on the
   * registration's loop, just before that keepalive's {@code KEEPALIVE} event when there is one (so a listener may
   * pair the two). Must be fast and should not throw (an exception is logged and ignored).
   */
  @FunctionalInterface
  public interface KeepaliveObserver {
    /** Observes nothing: the keepalive is not even timed. */
    KeepaliveObserver NONE = (id, lease, ttl, answeredIn) -> { };

    /**
     * @param id the registration's instance id
     * @param lease the lease renewed
     * @param ttl the lease's TTL etcd reported
     * @param answeredIn from sending the keepalive to its answer
     */
    void answered(String id, long lease, Duration ttl, Duration answeredIn);
  }

  public RegistrarControls withReregister(boolean reregister) {
    return new RegistrarControls(reregister, reportKeepalives, keepaliveObserver);
  }

  public RegistrarControls withReportKeepalives(boolean reportKeepalives) {
    return new RegistrarControls(reregister, reportKeepalives, keepaliveObserver);
  }

  public RegistrarControls withKeepaliveObserver(KeepaliveObserver keepaliveObserver) {
    return new RegistrarControls(reregister, reportKeepalives, keepaliveObserver);
  }
}
