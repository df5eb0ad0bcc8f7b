package dev.muster.spring;

import dev.muster.retry.RetryBudget;
import java.util.function.Supplier;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryPolicy;
import org.springframework.cloud.client.loadbalancer.ServiceInstanceChooser;

/**
 * Spring Cloud's blocking retries ({@code @LoadBalanced} {@code RestClient}/{@code RestTemplate} with spring-retry
 * on the class path), bounded by Muster's retry budget: a retry on the next instance happens only when Spring
 * Cloud's policy allows it (by default: GET only, once on another instance, on connection failures and the
 * status codes in {@code spring.cloud.loadbalancer.retry.retryable-status-codes}) and the service's
 * {@link RetryBudget} has room (a share of the requests plus a small floor, as for {@code MusterClient}). So a
 * fleet-wide failure cannot double the load. The retried attempt avoids the failed instance
 * ({@link MusterLoadBalancer}).
 */
public final class MusterRetryFactory implements LoadBalancedRetryFactory {
  private final Supplier<LoadBalancedRetryFactory> springCloudFactory;
  private final MusterClients clients;
  private volatile LoadBalancedRetryFactory springCloud;

  /** {@code springCloud} makes Spring Cloud's own factory, on first use. */
  public MusterRetryFactory(Supplier<LoadBalancedRetryFactory> springCloud, MusterClients clients) {
    this.springCloudFactory = springCloud;
    this.clients = clients;
  }

  private LoadBalancedRetryFactory springCloud() {
    LoadBalancedRetryFactory f = springCloud;
    if (f == null) {
      f = springCloudFactory.get();
      springCloud = f;
    }
    return f;
  }

  @Override
  public LoadBalancedRetryPolicy createRetryPolicy(String service, ServiceInstanceChooser chooser) {
    LoadBalancedRetryPolicy policy = springCloud().createRetryPolicy(service, chooser);
    RetryBudget budget = clients.client(service).budget();
    return new LoadBalancedRetryPolicy() {
      @Override
      public boolean canRetrySameServer(LoadBalancedRetryContext context) {
        return policy.canRetrySameServer(context) && budget.tryWithdraw();
      }

      @Override
      public boolean canRetryNextServer(LoadBalancedRetryContext context) {
        return policy.canRetryNextServer(context) && budget.tryWithdraw();
      }

      @Override
      public void close(LoadBalancedRetryContext context) {
        policy.close(context);
      }

      @Override
      public void registerThrowable(LoadBalancedRetryContext context, Throwable throwable) {
        policy.registerThrowable(context, throwable);
      }

      @Override
      public boolean retryableStatusCode(int statusCode) {
        return policy.retryableStatusCode(statusCode);
      }

      @Override
      public boolean retryableException(Throwable exception) {
        return policy.retryableException(exception);
      }
    };
  }

  @Override
  public org.springframework.retry.RetryListener[] createRetryListeners(String service) {
    return springCloud().createRetryListeners(service);
  }

  @Override
  public org.springframework.retry.backoff.BackOffPolicy createBackOffPolicy(String service) {
    return springCloud().createBackOffPolicy(service);
  }
}
