package dev.muster.registry;

/**
 * Receives a {@link Registration}'s lifecycle events. Called on the registration's loop, one event at a time, in
 * order: a shared pool thread, or the application thread inside {@code register()} or {@link Registration#close()}
 * when that call runs the step itself. Must be fast and must not block on etcd. It may call back into the
 * registration ({@code update()}, {@code close()}): the call is queued behind the running step and does not wait
 * for it, so do not wait on the returned future here. An exception it throws is logged and ignored.
 */
@FunctionalInterface
public interface RegistrationListener {
  RegistrationListener NONE = event -> { };

  void onEvent(RegistrationEvent event);
}
