package dev.muster.console.internal;

import java.time.Instant;
import java.util.Objects;

/**
 * One line of the console's event stream: what happened to which instance (or service), when the console saw it.
 *
 * @param seq the ring's sequence number, 1, 2, ...: a page asks for events after the last one it has
 * @param type {@code join}, {@code leave} (after draining), {@code lease-lost} (removed while not draining: the
 *     lease expired or the key was deleted), {@code re-register} (an id back after leaving), {@code drain},
 *     {@code up}, {@code change}, {@code resync}, {@code stale}, {@code fresh}, {@code failed}, {@code service-added},
 *     {@code service-gone}
 * @param version the instance's version, empty for a service-wide event
 * @param id the instance id, empty for a service-wide event
 */
record ConsoleEvent(long seq, Instant at, String type, String namespace, String service, String version, String id,
    String detail) {
  ConsoleEvent {
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(type, "type");
  }

  /** An event not yet numbered: what {@link EventDeriver} produces and {@link EventRing} stamps. */
  record Draft(String type, String namespace, String service, String version, String id, String detail) {}
}
