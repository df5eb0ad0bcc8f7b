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
  private volatile MusterServiceInstance bound; // null until the web server bound its port

  /** {@code build} makes the instance for the bound port. */
  public MusterRegistration(String service, String host, IntFunction<Instance> build) {
    this.service = Objects.requireNonNull(service, "service");
    this.host = Objects.requireNonNull(host, "host");
    this.build = Objects.requireNonNull(build, "build");
  }

  /** The instance as registered, or null before the web server bound its port. */
  public Instance instance() {
    MusterServiceInstance b = bound;
    return b == null ? null : b.instance();
  }

  /** Builds the instance for the port the web server bound; once. */
  synchronized Instance bind(int port) {
    if (bound == null) {
      bound = new MusterServiceInstance(build.apply(port));
    }
    return bound.instance();
  }

  @Override
  public String getInstanceId() {
    MusterServiceInstance b = bound;
    return b == null ? null : b.getInstanceId();
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
    MusterServiceInstance b = bound;
    return b == null ? 0 : b.getPort();
  }

  @Override
  public boolean isSecure() {
    MusterServiceInstance b = bound;
    return b != null && b.isSecure();
  }

  @Override
  public URI getUri() {
    return ServiceInstance.createUri(this);
  }

  @Override
  public Map<String, String> getMetadata() {
    MusterServiceInstance b = bound;
    return b == null ? Map.of() : b.getMetadata();
  }

  @Override
  public String toString() {
    MusterServiceInstance b = bound;
    return "MusterRegistration[" + service + (b == null ? " (not bound yet)" : " " + b.instance().key().path() + " "
        + host + ":" + b.getPort()) + "]";
  }
}
