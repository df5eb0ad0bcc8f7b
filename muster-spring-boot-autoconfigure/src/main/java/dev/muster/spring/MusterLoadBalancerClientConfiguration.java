package dev.muster.spring;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The beans of each load-balanced client's own context (Spring Cloud makes one per service; the service id is
 * {@link LoadBalancerClientFactory#PROPERTY_NAME} there). Registered before Spring Cloud's defaults, whose
 * {@code @ConditionalOnMissingBean} beans then back off; a client's own {@code @LoadBalancerClient(configuration
 * = ...)} still wins.
 */
@Configuration(proxyBeanMethods = false)
public class MusterLoadBalancerClientConfiguration {
  @Bean
  @ConditionalOnMissingBean
  public ReactorLoadBalancer<ServiceInstance> musterLoadBalancer(Environment environment, MusterClients clients) {
    return new MusterLoadBalancer(LoadBalancerClientFactory.getName(environment), clients);
  }

  @Bean
  @ConditionalOnMissingBean
  public ServiceInstanceListSupplier musterServiceInstanceListSupplier(Environment environment,
      MusterClients clients) {
    return new MusterServiceInstanceListSupplier(LoadBalancerClientFactory.getName(environment), clients);
  }
}
