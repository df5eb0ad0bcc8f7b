package dev.muster.spring;

import java.util.Collections;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancedRetryFactory;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.blocking.retry.BlockingLoadBalancedRetryFactory;
import org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Cloud LoadBalancer on Muster: every load-balanced client ({@code @LoadBalanced} {@code RestClient},
 * {@code WebClient}, {@code RestTemplate}) gets {@link MusterLoadBalancer} and a pushing
 * {@link MusterServiceInstanceListSupplier} (through {@link MusterLoadBalancerClientConfiguration}, the default
 * configuration of every client), and retries bounded by Muster's budget: the blocking ones with spring-retry on the
 * class path ({@link MusterRetryFactory}), the reactive ones of a {@code WebClient} with
 * {@code spring.cloud.loadbalancer.retry.enabled=true} ({@link MusterRetryableExchangeFilterFunction}).
 * Off with {@code spring.cloud.loadbalancer.enabled=false}; {@code muster.loadbalancer.enabled=false} leaves Spring
 * Cloud's own balancing (round robin over a list from {@link MusterDiscoveryClient}, cached 35 s) in place.
 */
@AutoConfiguration(after = MusterAutoConfiguration.class,
    before = {LoadBalancerAutoConfiguration.class, BlockingLoadBalancerClientAutoConfiguration.class},
    beforeName = "org.springframework.cloud.client.loadbalancer.reactive.ReactorLoadBalancerClientAutoConfiguration")
@ConditionalOnClass(name = "org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer")
@ConditionalOnBean(MusterClients.class)
@ConditionalOnProperty(value = "spring.cloud.loadbalancer.enabled", matchIfMissing = true)
@ConditionalOnBooleanProperty(name = "muster.loadbalancer.enabled", matchIfMissing = true)
@LoadBalancerClients(defaultConfiguration = MusterLoadBalancerClientConfiguration.class)
public class MusterLoadBalancerAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  public MusterLoadBalancerLifecycle musterLoadBalancerLifecycle(MusterClients clients) {
    return new MusterLoadBalancerLifecycle(clients);
  }

  /** Spring Cloud's blocking retry policy, within Muster's retry budget. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.retry.support.RetryTemplate")
  static class Retry {
    @Bean
    @ConditionalOnMissingBean
    public LoadBalancedRetryFactory musterRetryFactory(
        ObjectProvider<ReactiveLoadBalancer.Factory<ServiceInstance>> factory, MusterClients clients) {
      // Spring Cloud's factory is defined by its LoadBalancerAutoConfiguration, which runs after this one.
      return new MusterRetryFactory(() -> new BlockingLoadBalancedRetryFactory(factory.getObject()), clients);
    }
  }

  /**
   * Spring Cloud's reactive retries ({@code @LoadBalanced} {@code WebClient}, on only with
   * {@code spring.cloud.loadbalancer.retry.enabled=true}, as Spring Cloud's own filter), within Muster's budget.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.web.reactive.function.client.WebClient")
  @ConditionalOnProperty(value = "spring.cloud.loadbalancer.retry.enabled", havingValue = "true")
  static class ReactiveRetry {
    @Bean
    @ConditionalOnMissingBean
    public RetryableLoadBalancerExchangeFilterFunction musterRetryableLoadBalancerExchangeFilterFunction(
        LoadBalancerRetryPolicy.Factory policies, ReactiveLoadBalancer.Factory<ServiceInstance> balancers,
        ObjectProvider<List<LoadBalancerClientRequestTransformer>> transformers, MusterClients clients) {
      // Spring Cloud's policy factory and balancers come from its auto-configurations, which run after this one.
      return new MusterRetryableExchangeFilterFunction(policies, balancers,
          transformers.getIfAvailable(Collections::emptyList), clients);
    }
  }
}
