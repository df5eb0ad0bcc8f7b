package dev.muster.spring;

import dev.muster.client.MusterClient;
import java.util.List;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * Spring Cloud's {@link DiscoveryClient} on Muster's caches: {@link #getInstances} reads the service's live set
 * (a watch keeps it equal to etcd's; the first call starts it and waits up to
 * {@code muster.discovery.first-set-timeout}); {@code DRAINING} instances are listed, marked in their metadata
 * ({@code muster.state}). {@link #getServices} reads the namespace from etcd. Thread-safe.
 */
public final class MusterDiscoveryClient implements DiscoveryClient {
  private final MusterClients clients;

  public MusterDiscoveryClient(MusterClients clients) {
    this.clients = clients;
  }

  @Override
  public String description() {
    return "Muster (etcd at " + clients.registry().config().endpoints() + ")";
  }

  @Override
  public List<ServiceInstance> getInstances(String serviceId) {
    return instances(clients, serviceId);
  }

  static List<ServiceInstance> instances(MusterClients clients, String serviceId) {
    MusterClient client = clients.client(serviceId);
    client.awaitReady(client.firstSetTimeout());
    return client.cache().current().instances().stream()
        .<ServiceInstance>map(MusterServiceInstance::new).toList();
  }

  @Override
  public List<String> getServices() {
    return clients.services();
  }

  @Override
  public void probe() {
    clients.services();
  }
}
