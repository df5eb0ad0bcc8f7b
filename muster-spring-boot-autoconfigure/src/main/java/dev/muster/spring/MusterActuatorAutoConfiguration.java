package dev.muster.spring;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The {@code muster} health indicator and the {@code /actuator/muster} endpoint, when Actuator is present. */
@AutoConfiguration(after = {MusterAutoConfiguration.class, MusterServiceRegistryAutoConfiguration.class})
@ConditionalOnBean(MusterClients.class)
public class MusterActuatorAutoConfiguration {
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
  static class HealthConfiguration {
    @Bean(name = "musterHealthIndicator")
    @ConditionalOnMissingBean(name = "musterHealthIndicator")
    public MusterHealthIndicator musterHealthIndicator(ObjectProvider<MusterServiceRegistry> registry,
        MusterClients clients) {
      return new MusterHealthIndicator(registry.getIfAvailable(), clients);
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
  static class EndpointConfiguration {
    @Bean
    @ConditionalOnMissingBean
    public MusterEndpoint musterEndpoint(ObjectProvider<MusterServiceRegistry> registry, MusterClients clients) {
      return new MusterEndpoint(registry.getIfAvailable(), clients);
    }
  }
}
