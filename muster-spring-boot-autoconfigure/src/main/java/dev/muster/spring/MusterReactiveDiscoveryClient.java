package dev.muster.spring;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

/**
 * {@link MusterDiscoveryClient} for reactive applications: the same caches, with the waits (a first set, a
 * listing from etcd) moved off the caller's thread to Reactor's bounded-elastic scheduler. Thread-safe.
 */
public final class MusterReactiveDiscoveryClient implements ReactiveDiscoveryClient {
  private final MusterClients clients;

  public MusterReactiveDiscoveryClient(MusterClients clients) {
    this.clients = clients;
  }

  @Override
  public String description() {
    return "Muster, reactive (etcd at " + clients.registry().config().endpoints() + ")";
  }

  @Override
  public Flux<ServiceInstance> getInstances(String serviceId) {
    return Flux.defer(() -> Flux.fromIterable(MusterDiscoveryClient.instances(clients, serviceId)))
        .subscribeOn(Schedulers.boundedElastic());
  }

  @Override
  public Flux<String> getServices() {
    return Flux.defer(() -> Flux.fromIterable(clients.services())).subscribeOn(Schedulers.boundedElastic());
  }
}
