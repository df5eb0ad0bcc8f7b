package dev.muster.registry;

import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * A provider's live registration: its key in etcd under a lease that a background loop keeps alive, re-creating
 * both when etcd says the lease is gone.
 *
 * <p>Thread-safe. Every etcd call happens on the registration's loop, one at a time: a thread of a shared pool, or
 * the application thread inside {@code register()} or {@link #close()}, which waits for that step anyway and runs
 * it itself when the loop is idle. The other methods only hand work to the loop, so an application thread never
 * waits on etcd except in {@code register()} and {@link #close()}, whose job is to wait for the write, or for the
 * drain and the revoke.
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
   * Puts state {@code UP}: an instance registered {@code STARTING} (not ready) starts taking new calls. A put on
   * the same lease, as {@link #update}; completes with the instance as put.
   */
  default CompletableFuture<Instance> ready() {
    return update(i -> i.state(InstanceState.UP));
  }

  /**
   * Puts state {@code STARTING}: the instance stays registered (its lease kept alive) but takes no new calls until
   * {@link #ready()}; for a provider that lost a dependency it cannot serve without.
   */
  default CompletableFuture<Instance> notReady() {
    return update(i -> i.state(InstanceState.STARTING));
  }

  /**
   * The first half of a graceful stop, for a provider with work to do between "consumers have stopped sending" and
   * "the key is gone" (a server's GOAWAY, the end of its in-flight calls): publishes state DRAINING on the same
   * lease and keeps the lease alive; completes when the drain period ({@link RegistrarConfig#drain()}) has passed.
   * The key then stays, DRAINING, until {@link #close()}, which revokes it at once. Calling it again, or after a
   * close began, returns the same future; on a closed or failed registration it is already complete. Never fails.
   *
   * <p>It completes on the registration's loop: chain anything slow with an {@code *Async} stage. Nothing waits
   * out the period: it is a timer.
   */
  CompletableFuture<Void> drain();

  /**
   * Starts a graceful stop: publishes state DRAINING, waits the drain period (keeping the lease alive), revokes
   * the lease. After {@link #drain()} has completed, revokes at once; during one, revokes at its end. Completes
   * when the lease is revoked (or the revoke failed; the key then expires with the lease). Calling it again
   * returns the same future.
   */
  CompletableFuture<Void> closeAsync();

  /** What this registration has done so far (keepalives, lost leases, re-registrations, drains), for metrics. */
  default RegistrationStats stats() {
    return RegistrationStats.NONE;
  }

  /** {@link #closeAsync()} and wait for it. A second call is a no-op. */
  @Override
  void close();
}
