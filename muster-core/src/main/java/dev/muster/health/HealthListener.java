package dev.muster.health;

import org.slf4j.LoggerFactory;

/**
 * Receives {@link HealthEvent}s. Called never under a lock of Muster's, and one event at a time in the order the
 * decisions were made (each prober's and each balancer's events in their own order): on the thread that made the
 * decision (a probe's completion, a caller's thread whose pick rebuilt the balancer, the scheduler's thread for
 * staleness), or on one that was delivering an earlier event at that moment. It must be fast and must not throw (a
 * throw is logged and ignored).
 */
@FunctionalInterface
public interface HealthListener {
  HealthListener NONE = event -> { };

  void onEvent(HealthEvent event);

  /** {@code listener} ({@link #NONE} for null) with a throw logged at WARN and ignored, as the contract says. */
  static HealthListener guarded(HealthListener listener) {
    if (listener == null) {
      return NONE;
    }
    return event -> {
      try {
        listener.onEvent(event);
      } catch (RuntimeException e) {
        LoggerFactory.getLogger(HealthListener.class).warn("health listener failed on {}; ignored", event.type(), e);
      }
    };
  }
}
