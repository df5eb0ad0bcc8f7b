package dev.muster.spring;

import dev.muster.client.MusterClient;
import java.util.List;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

/**
 * Spring Cloud's {@link DiscoveryClient} on Muster's caches: {@link #getInstances} lists what Muster's balancer of
 * the service may pick now ({@link dev.muster.balance.Balancer#eligible()}, the same policy as every Muster
 * consumer, issue 34): {@code UP} instances only (not {@code STARTING}, not {@code DRAINING}), records that verified
 * when {@code muster.discovery.trust-keys} is set, none failing their probe or ejected (unless all are: panic), and
 * none at all while etcd has been unreachable past {@code muster.discovery.max-stale} with {@code FAIL_CLOSED}. A
 * watch keeps the set equal to etcd's; the first call starts it and waits up to
 * {@code muster.discovery.first-set-timeout}. {@link #getServices} reads the namespace from etcd. Thread-safe.
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
    return client.balancer().eligible().stream()
        .<ServiceInstance>map(e -> new MusterServiceInstance(e.instance())).toList();
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
