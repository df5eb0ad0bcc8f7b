package dev.muster.registry;

/**
 * Receives a {@link Registration}'s lifecycle events. Called on the registration's own thread, one event at a
 * time, in order; must be fast and must not block on etcd. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface RegistrationListener {
  RegistrationListener NONE = event -> { };

  void onEvent(RegistrationEvent event);
}
