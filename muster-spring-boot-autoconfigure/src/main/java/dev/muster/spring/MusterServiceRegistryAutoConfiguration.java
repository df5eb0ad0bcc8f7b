package dev.muster.spring;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationAutoConfiguration;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationProperties;
import org.springframework.cloud.commons.util.InetUtils;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-registration: this application as {@code spring.application.name}, registered once its web server is up,
 * drained and revoked in order on shutdown. Off with {@code spring.cloud.service-registry.auto-registration.enabled
 * =false}.
 */
@AutoConfiguration(after = {MusterAutoConfiguration.class, AutoServiceRegistrationAutoConfiguration.class,
    UtilAutoConfiguration.class})
@ConditionalOnBean(EtcdRegistry.class)
@ConditionalOnProperty(value = "spring.cloud.service-registry.auto-registration.enabled", matchIfMissing = true)
public class MusterServiceRegistryAutoConfiguration {
  @Bean
  @ConditionalOnMissingBean
  public MusterServiceRegistry musterServiceRegistry(EtcdRegistry registry, MusterProperties properties,
      ObjectProvider<io.micrometer.core.instrument.MeterRegistry> meters) {
    return new MusterServiceRegistry(registry, properties, meters.getIfAvailable());
  }

  @Bean
  @ConditionalOnMissingBean
  public MusterRegistration musterRegistration(MusterProperties properties, Environment environment,
      ObjectProvider<InetUtils> inet) {
    String service = environment.getProperty("spring.application.name");
    if (service == null || service.isBlank()) {
      throw new IllegalStateException("spring.application.name is not set: Muster registers the application under"
          + " that name; set it, or turn registration off with"
          + " spring.cloud.service-registry.auto-registration.enabled=false");
    }
    MusterProperties.Instance s = properties.instance();
    String host = s.address() != null ? s.address() : defaultAddress(inet.getIfAvailable());
    // Validated now (a bad name, weight or tag fails the start, naming the value); built again with the real port.
    instance(service, host, 1, properties);
    return new MusterRegistration(service, host, port -> instance(service, host, port, properties));
  }

  @Bean
  @ConditionalOnMissingBean
  public MusterAutoServiceRegistration musterAutoServiceRegistration(ApplicationContext context,
      MusterServiceRegistry serviceRegistry, ObjectProvider<AutoServiceRegistrationProperties> autoProperties,
      MusterRegistration registration, MusterProperties properties) {
    return new MusterAutoServiceRegistration(context, serviceRegistry,
        autoProperties.getIfAvailable(AutoServiceRegistrationProperties::new), registration, properties);
  }

  @Bean
  @ConditionalOnMissingBean
  public MusterDrainLifecycle musterDrainLifecycle(MusterServiceRegistry serviceRegistry) {
    return new MusterDrainLifecycle(serviceRegistry);
  }

  static Instance instance(String service, String host, int port, MusterProperties properties) {
    MusterProperties.Instance s = properties.instance();
    Instance i = Instance.of(service, host, port).namespace(properties.namespace()).version(s.version())
        .weight(s.weight()).zone(s.zone()).region(s.region()).tags(s.tags()).metadata(s.metadata());
    return s.id() != null ? i.id(s.id()) : i;
  }

  private static String defaultAddress(InetUtils inet) {
    if (inet == null) {
      return "127.0.0.1";
    }
    return inet.findFirstNonLoopbackHostInfo().getIpAddress();
  }
}
