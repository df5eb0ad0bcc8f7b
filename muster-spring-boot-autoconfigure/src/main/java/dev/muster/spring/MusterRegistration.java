package dev.muster.spring;

import dev.muster.registry.Instance;
import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.function.IntFunction;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.serviceregistry.Registration;

/**
 * This application's registration in Spring Cloud's terms. The {@link Instance} is built once the web server has
 * bound its port ({@code WebServerInitializedEvent}): the default instance id names the port. Before that,
 * {@link #getPort()} is 0 and {@link #instance()} is null. Thread-safe.
 */
public final class MusterRegistration implements Registration {
  private final String service;
  private final String host;
  private final IntFunction<Instance> build;
  private volatile Instance instance;

  /** {@code build} makes the instance for the bound port. */
  public MusterRegistration(String service, String host, IntFunction<Instance> build) {
    this.service = Objects.requireNonNull(service, "service");
    this.host = Objects.requireNonNull(host, "host");
    this.build = Objects.requireNonNull(build, "build");
  }

  /** The instance as registered, or null before the web server bound its port. */
  public Instance instance() {
    return instance;
  }

  /** Builds the instance for the port the web server bound; once. */
  synchronized Instance bind(int port) {
    if (instance == null) {
      instance = build.apply(port);
    }
    return instance;
  }

  @Override
  public String getInstanceId() {
    Instance i = instance;
    return i == null ? null : i.id();
  }

  @Override
  public String getServiceId() {
    return service;
  }

  @Override
  public String getHost() {
    return host;
  }

  @Override
  public int getPort() {
    Instance i = instance;
    return i == null ? 0 : i.port();
  }

  @Override
  public boolean isSecure() {
    Instance i = instance;
    return i != null && "true".equalsIgnoreCase(i.metadata().get("secure"));
  }

  @Override
  public URI getUri() {
    return ServiceInstance.createUri(this);
  }

  @Override
  public Map<String, String> getMetadata() {
    Instance i = instance;
    return i == null ? Map.of() : new MusterServiceInstance(i).getMetadata();
  }

  @Override
  public String toString() {
    Instance i = instance;
    return "MusterRegistration[" + service + (i == null ? " (not bound yet)" : " " + i.key().path() + " " + host
        + ":" + i.port()) + "]";
  }
}
