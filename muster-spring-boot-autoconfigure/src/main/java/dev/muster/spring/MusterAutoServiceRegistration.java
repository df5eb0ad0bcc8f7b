package dev.muster.spring;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationProperties;
import org.springframework.context.ApplicationContext;

/**
 * Registers this application once its web server is up ({@code WebServerInitializedEvent}), with the port the
 * server bound, and revokes the lease when the context stops (Spring Cloud's contract; turned off by
 * {@code spring.cloud.service-registry.auto-registration.enabled=false}). The revoke runs in lifecycle phase 0,
 * after the web server's graceful shutdown has let the requests in flight finish.
 */
public final class MusterAutoServiceRegistration extends AbstractAutoServiceRegistration<MusterRegistration> {
  private static final Logger log = LoggerFactory.getLogger(MusterAutoServiceRegistration.class);

  private final MusterServiceRegistry serviceRegistry;
  private final MusterRegistration registration;
  private final MusterProperties properties;
  private final boolean failFast;

  public MusterAutoServiceRegistration(ApplicationContext context, MusterServiceRegistry serviceRegistry,
      AutoServiceRegistrationProperties autoProperties, MusterRegistration registration,
      MusterProperties properties) {
    super(context, serviceRegistry, autoProperties);
    this.serviceRegistry = serviceRegistry;
    this.registration = registration;
    this.properties = properties;
    this.failFast = autoProperties.isFailFast();
  }

  /**
   * Registers with the bound port. With {@code spring.cloud.service-registry.auto-registration.fail-fast=true} it
   * registers on the starting thread, and a refusal or an etcd that does not answer within the registrar's start
   * timeout fails the start. Otherwise (the default) it registers on a thread of its own, so the application's
   * start does not wait for etcd (the first connection — jetcd, gRPC, Vert.x — costs about 1.5 s on a 2-core
   * machine); a failure is one log line, and the {@code muster} health is DOWN until the application restarts.
   */
  @Override
  protected void register() {
    registration.bind(getPort().get());
    if (failFast) {
      registerNow();
      return;
    }
    Thread t = new Thread(() -> {
      try {
        registerNow();
      } catch (RuntimeException e) {
        log.error("muster: {} is NOT registered: {} (the application runs without it; set"
            + " spring.cloud.service-registry.auto-registration.fail-fast=true to fail the start instead)",
            registration.getServiceId(), e.getMessage());
      }
    }, "muster-register");
    t.setDaemon(true);
    t.start();
  }

  private void registerNow() {
    try {
      super.register();
    } catch (RuntimeException e) {
      serviceRegistry.failed(e);
      throw e;
    }
  }

  @Override
  protected Object getConfiguration() {
    return properties;
  }

  @Override
  protected boolean isEnabled() {
    return true; // the auto-registration switch is checked by the auto-configuration's condition
  }

  @Override
  protected MusterRegistration getRegistration() {
    return registration;
  }

  @Override
  protected MusterRegistration getManagementRegistration() {
    return null;
  }
}
