package dev.muster.spring;

import dev.muster.balance.EndpointState;
import dev.muster.client.MusterClient;
import dev.muster.outlier.Outcome;
import java.time.Duration;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;

/**
 * Feeds each call that {@link MusterLoadBalancer} picked for back to Muster's engine, as {@code MusterClient}
 * does for its own attempts: the endpoint's in-flight count and latency (for power of two choices) and the
 * outcome (for ejection). A call that failed without an answer (refused, reset, timed out) is a local-origin
 * failure; an answer of 500 or more is a 5xx; any other answer is a success; a discarded call proves nothing. The
 * first attempt of each request (an instance {@link MusterLoadBalancer} did not pick for a retry) deposits into the
 * service's retry budget, for the blocking and the reactive clients alike; the retries withdraw
 * ({@link MusterRetryFactory}, {@link MusterRetryableExchangeFilterFunction}).
 *
 * <p>Thread-safe: Spring Cloud calls it from the threads that run the requests.
 */
public final class MusterLoadBalancerLifecycle implements LoadBalancerLifecycle<Object, Object, ServiceInstance> {
  private final MusterClients clients;

  public MusterLoadBalancerLifecycle(MusterClients clients) {
    this.clients = clients;
  }

  @Override
  public boolean supports(Class requestContextClass, Class responseClass, Class serverTypeClass) {
    return ServiceInstance.class.isAssignableFrom(serverTypeClass);
  }

  @Override
  public void onStart(Request<Object> request) {}

  @Override
  public void onStartRequest(Request<Object> request, Response<ServiceInstance> lbResponse) {
    if (lbResponse != null && lbResponse.getServer() instanceof MusterServiceInstance picked
        && picked.picked() != null) {
      picked.started(System.nanoTime());
      picked.picked().started();
      if (!picked.retry()) {
        // Not the request's context: by now Spring Cloud's reactive retries have put this very instance in it as
        // the "previous" one, so every attempt would look like a retry there. The choice knew which it was.
        clientOf(picked).budget().deposit();
      }
    }
  }

  @Override
  public void onComplete(CompletionContext<Object, ServiceInstance, Object> completion) {
    Response<ServiceInstance> lb = completion.getLoadBalancerResponse();
    if (lb == null || !(lb.getServer() instanceof MusterServiceInstance picked) || picked.picked() == null
        || picked.startedNanos() == 0) {
      return;
    }
    EndpointState endpoint = picked.picked();
    endpoint.finished(Duration.ofNanos(System.nanoTime() - picked.startedNanos()));
    Outcome outcome = outcome(completion);
    if (outcome != null) {
      clientOf(picked).balancer().detector().record(endpoint.outlier(), outcome);
    }
  }

  private MusterClient clientOf(MusterServiceInstance picked) {
    return clients.client(picked.getServiceId());
  }

  /** What the call proved about the endpoint; null when nothing (discarded). */
  static Outcome outcome(CompletionContext<Object, ServiceInstance, Object> completion) {
    return switch (completion.status()) {
      case DISCARD -> null;
      case FAILED -> completion.getClientResponse() instanceof ResponseData data && data.getHttpStatus() != null
          ? (data.getHttpStatus().is5xxServerError() ? Outcome.HTTP_5XX : Outcome.SUCCESS)
          : Outcome.LOCAL_ORIGIN_FAILURE;
      case SUCCESS -> completion.getClientResponse() instanceof ResponseData data && data.getHttpStatus() != null
          && data.getHttpStatus().is5xxServerError() ? Outcome.HTTP_5XX : Outcome.SUCCESS;
    };
  }
}
