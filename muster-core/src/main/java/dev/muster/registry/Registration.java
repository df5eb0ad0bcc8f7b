package dev.muster.registry;

import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * A provider's live registration: its key in etcd under a lease that a background loop keeps alive, re-creating
 * both when etcd says the lease is gone.
 *
 * <p>Thread-safe. Every etcd call happens on the registration's own thread; the methods here only hand work to
 * it, so an application thread never waits on etcd except in {@link #close()}, whose job is to wait for the drain
 * and the revoke.
 */
public interface Registration extends AutoCloseable {
  /** The instance as last written (or being written). */
  Instance instance();

  /** The lease currently holding the key (changes after a re-registration). */
  long leaseId();

  RegistrationState state();

  /**
   * Changes weight, state, zone, tags or metadata at runtime: the new value is put on the same lease. The
   * identity (namespace, service, version, id) cannot change. Completes when etcd has the value; fails with
   * {@link dev.muster.InvalidInputException} for a changed identity or an invalid value.
   */
  CompletableFuture<Instance> update(UnaryOperator<Instance> change);

  /**
   * Starts a graceful stop: publishes state DRAINING, waits the drain period (keeping the lease alive), revokes
   * the lease. Completes when the lease is revoked (or the revoke failed; the key then expires with the lease).
   * Calling it again returns the same future.
   */
  CompletableFuture<Void> closeAsync();

  /** {@link #closeAsync()} and wait for it. A second call is a no-op. */
  @Override
  void close();
}
