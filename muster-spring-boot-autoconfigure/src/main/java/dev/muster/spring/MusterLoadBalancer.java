package dev.muster.spring;

import dev.muster.balance.Balancer;
import dev.muster.balance.EndpointState;
import dev.muster.client.MusterClient;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Spring Cloud's load balancer on Muster's engine: {@link #choose} asks the service's {@link Balancer} — power of
 * two choices over the live set, weights, zone preference, locally ejected endpoints left out, panic routing
 * when too many are — the same allocation-free pick as {@code MusterClient}'s. A retry (Spring Cloud's
 * {@link RetryableRequestContext} with a previous instance) avoids the endpoint of the failed attempt. The calls'
 * outcomes come back through {@link MusterLoadBalancerLifecycle}.
 *
 * <p>Past {@code muster.discovery.max-stale} with {@code FAIL_CLOSED} a choice is empty (Spring Cloud then fails
 * the request with "No instances available"); the {@code max_stale_reached} line in the log says why.
 *
 * <p>Thread-safe. Before the service's first set is known, a choice waits for it (up to
 * {@code muster.discovery.first-set-timeout}) on Reactor's bounded-elastic scheduler, never on the caller's.
 */
public final class MusterLoadBalancer implements ReactorServiceInstanceLoadBalancer {
  private final String serviceId;
  private final MusterClients clients;

  public MusterLoadBalancer(String serviceId, MusterClients clients) {
    this.serviceId = serviceId;
    this.clients = clients;
  }

  @Override
  @SuppressWarnings("rawtypes")
  public Mono<Response<ServiceInstance>> choose(Request request) {
    MusterClient client = clients.client(serviceId);
    if (client.isReady()) {
      return Mono.just(pick(client, request));
    }
    return Mono.fromCallable(() -> {
      client.awaitReady(client.firstSetTimeout());
      return pick(client, request);
    }).subscribeOn(Schedulers.boundedElastic());
  }

  @SuppressWarnings("rawtypes")
  private Response<ServiceInstance> pick(MusterClient client, Request request) {
    if (client.staleRefusal().isPresent()) {
      return new EmptyResponse(); // FAIL_CLOSED past muster.discovery.max-stale: logged once as max_stale_reached
    }
    ServiceInstance previous = previous(request);
    EndpointState avoid = previous instanceof MusterServiceInstance before ? before.picked() : null;
    EndpointState picked = avoid == null ? client.balancer().pick() : client.balancer().pick(avoid);
    return picked == null ? new EmptyResponse()
        : new DefaultResponse(new MusterServiceInstance(picked.instance(), picked, previous != null));
  }

  /**
   * The instance a retried request went to before, if Spring Cloud says this is a retry; null for a first attempt.
   * (Both the blocking and the reactive retries name it in a {@link RetryableRequestContext} when they choose.)
   */
  @SuppressWarnings("rawtypes")
  private static ServiceInstance previous(Request request) {
    return request != null && request.getContext() instanceof RetryableRequestContext retry
        ? retry.getPreviousServiceInstance() : null;
  }
}
