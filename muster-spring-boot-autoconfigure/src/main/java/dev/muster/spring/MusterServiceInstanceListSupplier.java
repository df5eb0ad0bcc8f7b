package dev.muster.spring;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.client.MusterClient;
import java.util.List;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * A {@link ServiceInstanceListSupplier} that pushes: its flux emits the service's set when subscribed and again on
 * every change the cache publishes, so a load balancer built on it never works from a list older than the watch
 * (Spring Cloud's default caches the list for 35 s). {@code DRAINING} instances are left out: they take no new
 * requests. Muster's own load balancer does not need it (it picks from the same cache directly); it is here for
 * applications that keep one of Spring Cloud's balancers.
 *
 * <p>Thread-safe, and no lock: every emission comes from the cache's listener, which the cache's notifier calls one
 * call at a time, in order, on a delivery-pool thread — the set published last when the listener is added, then
 * every change — so the sink is never emitted to by two threads at once and a subscriber's {@code onNext} runs
 * under no lock of Muster's.
 * Before the service's first set is known the flux has nothing to replay: a subscriber waits for it.
 */
public final class MusterServiceInstanceListSupplier implements ServiceInstanceListSupplier {
  private final String serviceId;
  private final MusterClient client;
  private final Sinks.Many<List<ServiceInstance>> sets = Sinks.many().replay().latest();

  public MusterServiceInstanceListSupplier(String serviceId, MusterClients clients) {
    this.serviceId = serviceId;
    this.client = clients.client(serviceId);
    client.cache().addListener(new EndpointListener() {
      @Override
      public void onChange(EndpointSet set, EndpointDelta delta) {
        emit(set); // the cache's notifier: the only caller, one call at a time
      }
    });
  }

  private void emit(EndpointSet set) {
    sets.tryEmitNext(set.instances().stream().filter(i -> i.state().takesNewCalls())
        .<ServiceInstance>map(MusterServiceInstance::new).toList());
  }

  @Override
  public String getServiceId() {
    return serviceId;
  }

  @Override
  public Flux<List<ServiceInstance>> get() {
    return sets.asFlux();
  }
}
