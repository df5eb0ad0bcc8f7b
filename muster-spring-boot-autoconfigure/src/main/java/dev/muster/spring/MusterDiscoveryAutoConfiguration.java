package dev.muster.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ConditionalOnBlockingDiscoveryEnabled;
import org.springframework.cloud.client.ConditionalOnDiscoveryEnabled;
import org.springframework.cloud.client.ConditionalOnReactiveDiscoveryEnabled;
import org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code DiscoveryClient} and {@code ReactiveDiscoveryClient} on Muster's caches; {@code spring.cloud.discovery
 * .enabled}, {@code .blocking.enabled} and {@code .reactive.enabled} are honoured.
 */
@AutoConfiguration(after = MusterAutoConfiguration.class,
    before = {SimpleDiscoveryClientAutoConfiguration.class, CompositeDiscoveryClientAutoConfiguration.class})
@ConditionalOnBean(MusterClients.class)
@ConditionalOnDiscoveryEnabled
public class MusterDiscoveryAutoConfiguration {
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnBlockingDiscoveryEnabled
  static class Blocking {
    @Bean
    @ConditionalOnMissingBean
    public MusterDiscoveryClient musterDiscoveryClient(MusterClients clients) {
      return new MusterDiscoveryClient(clients);
    }
  }

  /** Only where Spring Cloud offers reactive discovery: WebClient (WebFlux) on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "reactor.core.publisher.Flux")
  @ConditionalOnReactiveDiscoveryEnabled
  static class Reactive {
    @Bean
    @ConditionalOnMissingBean
    public MusterReactiveDiscoveryClient musterReactiveDiscoveryClient(MusterClients clients) {
      return new MusterReactiveDiscoveryClient(clients);
    }
  }
}
