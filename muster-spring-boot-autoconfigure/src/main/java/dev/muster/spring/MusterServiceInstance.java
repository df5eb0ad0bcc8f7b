package dev.muster.spring;

import dev.muster.balance.EndpointState;
import dev.muster.registry.Instance;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.springframework.cloud.client.ServiceInstance;

/**
 * A Muster {@link Instance} as Spring Cloud sees it. Metadata: the instance's own metadata, plus {@code zone},
 * {@code region}, {@code weight}, {@code version}, {@code namespace}, {@code tags} (comma-separated) and
 * {@code muster.state} ({@code UP} or {@code DRAINING}). A {@code secure=true} metadata entry makes
 * {@link #isSecure()} true, which may only upgrade a call: a request written {@code https://orders/...} stays
 * {@code https} whatever the record says, one written {@code http://orders/...} goes {@code https} when it says
 * {@code secure=true} (Spring Cloud's {@code LoadBalancerUriTools}, with {@link #getScheme()} null). Anyone who can
 * write the record must not be able to send an {@code https} caller's request, and its credentials, in clear.
 *
 * <p>When the load balancer picked it, it also carries the picked {@link EndpointState}, through which the call's
 * outcome reaches the ejection; such an object stands for one pick and is not shared. Immutable otherwise.
 */
public final class MusterServiceInstance implements ServiceInstance {
  private final Instance instance;
  private final EndpointState picked; // null unless it came from the load balancer
  private final boolean retry; // picked for a retry of a request, not for its first attempt
  private final Map<String, String> metadata;
  private volatile long startedNanos; // set when the request starts (the load balancer's lifecycle)

  public MusterServiceInstance(Instance instance) {
    this(instance, null, false);
  }

  MusterServiceInstance(Instance instance, EndpointState picked, boolean retry) {
    this.instance = Objects.requireNonNull(instance, "instance");
    this.picked = picked;
    this.retry = retry;
    Map<String, String> m = new LinkedHashMap<>(instance.metadata());
    putIfNotNull(m, "zone", instance.zone());
    putIfNotNull(m, "region", instance.region());
    m.put("weight", Integer.toString(instance.weight()));
    m.put("version", instance.version());
    m.put("namespace", instance.namespace());
    if (!instance.tags().isEmpty()) {
      m.put("tags", String.join(",", instance.tags()));
    }
    m.put("muster.state", instance.state().name());
    this.metadata = Map.copyOf(m);
  }

  private static void putIfNotNull(Map<String, String> m, String key, String value) {
    if (value != null) {
      m.put(key, value);
    }
  }

  /** The Muster record behind it. */
  public Instance instance() {
    return instance;
  }

  /** The endpoint the load balancer picked, or null for an instance from discovery. */
  EndpointState picked() {
    return picked;
  }

  /** Whether the load balancer picked it for a retry (Spring Cloud named a previous instance), not a first try. */
  boolean retry() {
    return retry;
  }

  void started(long nanos) {
    startedNanos = nanos;
  }

  long startedNanos() {
    return startedNanos;
  }

  @Override
  public String getInstanceId() {
    return instance.id();
  }

  @Override
  public String getServiceId() {
    return instance.service();
  }

  @Override
  public String getHost() {
    return instance.address();
  }

  @Override
  public int getPort() {
    return instance.port();
  }

  @Override
  public boolean isSecure() {
    return "true".equalsIgnoreCase(instance.metadata().get("secure"));
  }

  @Override
  public URI getUri() {
    return ServiceInstance.createUri(this);
  }

  @Override
  public Map<String, String> getMetadata() {
    return metadata;
  }

  /**
   * Null: the scheme is the caller's, upgraded from {@code http} to {@code https} (and {@code ws} to {@code wss})
   * when {@link #isSecure()}, never downgraded. Spring Cloud rebuilds a load-balanced request's URI with this
   * scheme when it is not null, which would let a registry record turn an {@code https} call into {@code http}.
   */
  @Override
  public String getScheme() {
    return null;
  }

  @Override
  public String toString() {
    return "MusterServiceInstance[" + instance.key().path() + " " + instance.address() + ":" + instance.port() + " "
        + instance.state() + "]";
  }
}
