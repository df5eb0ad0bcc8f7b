package dev.muster.spring;

import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationState;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * {@code muster} in {@code /actuator/health}. DOWN when this application could not register, its registration has
 * given up ({@code FAILED}) or a cache was refused by etcd (a terminal failure); otherwise UP, with the registration's
 * state and each cache's readiness, staleness (since when, for how long), revision, size and ejected endpoints as
 * details. A stale cache is UP on purpose: the application keeps calling the last known set (SPEC §4), and
 * restarting it would only lose that set.
 */
public final class MusterHealthIndicator implements HealthIndicator {
  private final MusterServiceRegistry serviceRegistry; // null when this application does not register
  private final MusterClients clients;

  public MusterHealthIndicator(MusterServiceRegistry serviceRegistry, MusterClients clients) {
    this.serviceRegistry = serviceRegistry;
    this.clients = clients;
  }

  @Override
  public Health health() {
    Registration r = serviceRegistry == null ? null : serviceRegistry.registration();
    RuntimeException notRegistered = serviceRegistry == null ? null : serviceRegistry.failure();
    boolean down = notRegistered != null || (r != null && r.state() == RegistrationState.FAILED);
    Map<String, Object> caches = MusterStatus.caches(clients, false);
    down |= clients.started().values().stream().anyMatch(c -> c.cacheFailure().isPresent());
    Health.Builder h = down ? Health.down() : Health.up();
    Map<String, Object> registration = MusterStatus.registration(serviceRegistry);
    if (registration != null) {
      h.withDetail("registration", registration);
    }
    if (notRegistered != null) {
      h.withDetail("notRegistered", notRegistered.getMessage());
    }
    return h.withDetail("caches", caches).build();
  }
}
