package dev.muster.spring;

import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;

/**
 * Puts DRAINING first in the shutdown. Spring stops lifecycles from the highest phase down: this one (just above
 * the web server's graceful shutdown) runs the registration's {@link dev.muster.registry.Registration#drain()}
 * ({@code DRAINING} published, {@code muster.instance.drain} on the registrar's timer) while the server still takes
 * requests, and tells Spring it has stopped when the drain ends (the asynchronous {@link #stop(Runnable)}: no
 * thread sleeps through the drain); then the graceful shutdown stops taking new ones and waits for those in flight;
 * then the web server stops; last (phase 0) the auto-registration revokes the lease. So a consumer never calls an
 * address that refuses it while its key is still in etcd, and a request in flight is never cut off.
 *
 * <p>Keep {@code muster.instance.drain} below {@code spring.lifecycle.timeout-per-shutdown-phase} (30 s by
 * default), or Spring moves on before the drain ends.
 */
public final class MusterDrainLifecycle implements SmartLifecycle {
  /** Stopped before the web server's graceful shutdown (a higher phase stops first). */
  public static final int PHASE = WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE + 1;

  private final MusterServiceRegistry serviceRegistry;
  private volatile boolean running;

  public MusterDrainLifecycle(MusterServiceRegistry serviceRegistry) {
    this.serviceRegistry = serviceRegistry;
  }

  @Override
  public void start() {
    running = true;
  }

  /** Spring's form: {@code callback} runs when the drain has ended, on the registration's thread. */
  @Override
  public void stop(Runnable callback) {
    running = false;
    serviceRegistry.drain().whenComplete((v, e) -> callback.run());
  }

  /** The synchronous form, for a caller outside Spring's shutdown: waits for the drain's end. */
  @Override
  public void stop() {
    running = false;
    serviceRegistry.drain().join();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
