package dev.muster.spring;

import dev.muster.balance.EndpointState;
import dev.muster.cache.EndpointCache;
import dev.muster.client.MusterClient;
import dev.muster.registry.Registration;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the health indicator and {@code /actuator/muster} report: this application's registration and each
 * started cache, as plain maps (JSON-friendly). Reads only; thread-safe.
 */
final class MusterStatus {
  private MusterStatus() {}

  /** The registration: key, lease, state; null when nothing is registered. */
  static Map<String, Object> registration(MusterServiceRegistry registry) {
    Registration r = registry == null ? null : registry.registration();
    if (r == null) {
      return null;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("key", r.instance().key().path());
    m.put("address", r.instance().address() + ":" + r.instance().port());
    m.put("lease", Long.toHexString(r.leaseId()));
    m.put("state", r.state().name());
    m.put("instanceState", r.instance().state().name());
    return m;
  }

  /** Per started service: ready, stale and since when, revision, endpoints; with {@code detail}, each endpoint. */
  static Map<String, Object> caches(MusterClients clients, boolean detail) {
    Map<String, Object> all = new TreeMap<>();
    clients.started().forEach((service, client) -> all.put(service, cache(client, detail)));
    return all;
  }

  private static Map<String, Object> cache(MusterClient client, boolean detail) {
    EndpointCache cache = client.cache();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("ready", client.isReady());
    m.put("stale", cache.isStale());
    cache.staleSince().ifPresent(since -> {
      m.put("staleSince", since.toString());
      m.put("staleForMs", Duration.between(since, Instant.now()).toMillis());
    });
    client.cacheFailure().ifPresent(f -> m.put("failure", f.getMessage()));
    m.put("revision", cache.revision());
    m.put("endpoints", cache.current().size());
    List<EndpointState> endpoints = client.balancer().endpoints();
    m.put("ejected", endpoints.stream().filter(EndpointState::isEjected).map(e -> e.instance().id()).toList());
    m.put("panicking", client.balancer().isPanicking());
    m.put("resyncs", cache.resyncCount());
    if (detail) {
      m.put("ejections", client.balancer().detector().ejections());
      m.put("retryBudgetRefused", client.budget().refused());
      m.put("retryBudget", Map.of("requests", client.budget().deposits(), "retries", client.budget().withdrawals(),
          "refused", client.budget().refused()));
      m.put("instances", endpoints.stream().map(e -> {
        Map<String, Object> i = new LinkedHashMap<>();
        i.put("id", e.instance().id());
        i.put("address", e.instance().address() + ":" + e.instance().port());
        i.put("state", e.instance().state().name());
        i.put("zone", e.instance().zone());
        i.put("weight", e.instance().weight());
        i.put("ejected", e.isEjected());
        i.put("inFlight", e.inFlight());
        i.put("latencyEwmaMs", e.ewmaNanos() / 1e6);
        return i;
      }).toList());
    }
    return m;
  }
}
