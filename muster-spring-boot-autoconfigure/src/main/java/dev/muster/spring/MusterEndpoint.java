package dev.muster.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/muster}: etcd's endpoints, this application's registration, and every started cache with its
 * revision, staleness, instances (state, zone, weight, ejected, in flight), ejections and the retry budget's
 * counts (requests, retries, refused). Expose it with {@code management.endpoints.web.exposure.include=health,muster}.
 */
@Endpoint(id = "muster")
public final class MusterEndpoint {
  private final MusterServiceRegistry serviceRegistry;
  private final MusterClients clients;

  public MusterEndpoint(MusterServiceRegistry serviceRegistry, MusterClients clients) {
    this.serviceRegistry = serviceRegistry;
    this.clients = clients;
  }

  @ReadOperation
  public Map<String, Object> muster() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("etcd", clients.registry().config().endpoints().toString());
    m.put("registration", MusterStatus.registration(serviceRegistry));
    m.put("caches", MusterStatus.caches(clients, true));
    return m;
  }
}
