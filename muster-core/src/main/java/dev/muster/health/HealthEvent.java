package dev.muster.health;

import java.time.Instant;
import java.util.Locale;
import java.util.Objects;

/**
 * Something the calling layer decided about a service's endpoints on its own judgement: a probe took an endpoint
 * out or let it back, panic routing began or ended, a slow start finished, the registry stayed unreachable past
 * {@code maxStale} or answered again. Immutable.
 *
 * @param type what happened
 * @param service the service
 * @param instance the instance id it is about, or null when it is about the whole set (panic, staleness)
 * @param detail a human sentence: the probe's last result, the share routable, the stale age
 * @param at when (wall clock)
 */
public record HealthEvent(Type type, String service, String instance, String detail, Instant at) {
  public HealthEvent {
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(detail, "detail");
    Objects.requireNonNull(at, "at");
  }

  /** The kinds of event; {@link #jsonName()} is the {@code event} field of {@code muster call --json}. */
  public enum Type {
    /** {@code unhealthyThreshold} probes in a row failed: the endpoint takes no new picks. */
    PROBE_DOWN,
    /** {@code healthyThreshold} probes in a row passed after it was down: it takes picks again. */
    PROBE_UP,
    /** Local judgement (ejection, probes) would exclude more than the panic threshold allows: route across all. */
    PANIC_ON,
    /** Enough endpoints are routable again: local judgement applies again. */
    PANIC_OFF,
    /** An endpoint's slow-start window is over: it takes its full share. */
    SLOW_START_DONE,
    /** The cache has been stale for longer than {@code maxStale}: the stale policy applies. */
    MAX_STALE_REACHED,
    /** The registry answers again after {@code maxStale} was reached: picks are as before. */
    MAX_STALE_CLEARED;

    /** {@code probe_down}, {@code panic_on}, ... */
    public String jsonName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}
