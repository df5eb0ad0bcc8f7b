package dev.muster.registry.internal;

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
 */
public record RegistrarControls(boolean reregister, boolean reportKeepalives) {
  /** What every production registration uses. */
  public static final RegistrarControls PRODUCTION = new RegistrarControls(true, false);

  public RegistrarControls withReregister(boolean reregister) {
    return new RegistrarControls(reregister, reportKeepalives);
  }

  public RegistrarControls withReportKeepalives(boolean reportKeepalives) {
    return new RegistrarControls(reregister, reportKeepalives);
  }
}
