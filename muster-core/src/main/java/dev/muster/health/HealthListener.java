package dev.muster.health;

/**
 * Receives {@link HealthEvent}s. Called on the thread that made the decision (a probe's completion, a caller's
 * thread whose pick rebuilt the balancer, the scheduler's thread for staleness), never under a lock of Muster's: it
 * must be fast and must not throw (a throw is logged and ignored).
 */
@FunctionalInterface
public interface HealthListener {
  HealthListener NONE = event -> { };

  void onEvent(HealthEvent event);
}
