package dev.muster.xds;

import dev.muster.InvalidInputException;
import dev.muster.health.Probe;
import dev.muster.health.ProbeConfig;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * How {@link XdsServer} serves. Immutable; {@link #defaults()} or {@link #builder()}, checked when built, with
 * messages naming the field and the bad value.
 *
 * @param listen where the ADS server binds; {@code 127.0.0.1:18000} by default (port 0 picks a free one)
 * @param namespace the namespace whose services are served (one per server, as {@code muster dns}); {@code default}
 * @param zonePriorities whether a client whose bootstrap names its zone ({@code node.locality.zone}) gets its own
 *     zone's instances as priority 0 and the others as priority 1, so that it fails over to other zones only when
 *     its own has none it can use; on by default
 * @param outlier Muster's ejection settings, sent as each cluster's outlier detection ({@link OutlierConfig#enabled}
 *     false sends none); {@link OutlierConfig#defaults()}
 * @param failurePercentage gRPC reads only success-rate and failure-percentage ejection (gRFC A50), not Muster's
 *     consecutive-failure detectors: an endpoint whose calls fail more than this percentage of the time over 10 s
 *     (at least 10 calls, 2 or more endpoints) is ejected by a gRPC client; 0 turns it off; 50 by default
 * @param probe probe every served instance from the server, in parallel with its lease: one that fails is sent as
 *     {@code UNHEALTHY}; null (the default) for no probes
 * @param probeFactory the probe a {@link ProbeConfig.Kind#GRPC} probe config needs (muster-grpc's), or null for the
 *     HTTP and TCP probes the core has
 * @param trustedKeys serve only records signed by one of these keys (for the namespace): an unsigned or forged record
 *     is excluded by the service's cache, counted and never served; empty (the default): records are not checked
 * @param maxStreams ADS streams served at once; more are refused with RESOURCE_EXHAUSTED; 20,000
 * @param maxNames resource names one stream may ask for in one request of a type; a stream that asks for more is
 *     ended with RESOURCE_EXHAUSTED naming the limit; 1,000
 * @param maxServices services whose assignments the server follows at once (each holds a cache, one etcd watch);
 *     a stream whose request would open one more is ended with RESOURCE_EXHAUSTED naming the limit; 10,000
 */
public record XdsConfig(InetSocketAddress listen, String namespace, boolean zonePriorities, OutlierConfig outlier,
    int failurePercentage, ProbeConfig probe, Supplier<Probe> probeFactory, List<TrustedKey> trustedKeys,
    int maxStreams, int maxNames, int maxServices) {
  public static final int DEFAULT_PORT = 18000;

  public XdsConfig {
    Objects.requireNonNull(listen, "listen");
    Names.requireValid("namespace", namespace);
    Objects.requireNonNull(outlier, "outlier");
    if (failurePercentage < 0 || failurePercentage > 100) {
      throw new InvalidInputException("failurePercentage", failurePercentage, "use 0 (off) to 100");
    }
    if (probeFactory != null && probe == null) {
      throw new InvalidInputException("probeFactory", "given", "give it with the probe config it serves");
    }
    trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
    if (maxStreams < 1) {
      throw new InvalidInputException("maxStreams", maxStreams, "use 1 or more");
    }
    if (maxNames < 1) {
      throw new InvalidInputException("maxNames", maxNames, "use 1 or more");
    }
    if (maxServices < 1) {
      throw new InvalidInputException("maxServices", maxServices, "use 1 or more");
    }
  }

  public static XdsConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.listen = listen;
    b.namespace = namespace;
    b.zonePriorities = zonePriorities;
    b.outlier = outlier;
    b.failurePercentage = failurePercentage;
    b.probe = probe;
    b.probeFactory = probeFactory;
    b.trustedKeys = trustedKeys;
    b.maxStreams = maxStreams;
    b.maxNames = maxNames;
    b.maxServices = maxServices;
    return b;
  }

  /** Collects the settings; {@link #build()} checks them. Not thread-safe. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", DEFAULT_PORT);
    private String namespace = "default";
    private boolean zonePriorities = true;
    private OutlierConfig outlier = OutlierConfig.defaults();
    private int failurePercentage = 50;
    private ProbeConfig probe;
    private Supplier<Probe> probeFactory;
    private List<TrustedKey> trustedKeys = List.of();
    private int maxStreams = 20_000;
    private int maxNames = 1_000;
    private int maxServices = 10_000;

    private Builder() {}

    public Builder listen(InetSocketAddress listen) {
      this.listen = listen;
      return this;
    }

    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    public Builder zonePriorities(boolean on) {
      this.zonePriorities = on;
      return this;
    }

    public Builder outlier(OutlierConfig outlier) {
      this.outlier = outlier;
      return this;
    }

    public Builder failurePercentage(int percent) {
      this.failurePercentage = percent;
      return this;
    }

    /** Probes with {@code config}; {@code factory} makes the probe a gRPC config needs (null for HTTP and TCP). */
    public Builder probe(ProbeConfig config, Supplier<Probe> factory) {
      this.probe = config;
      this.probeFactory = factory;
      return this;
    }

    public Builder trustedKeys(List<TrustedKey> keys) {
      this.trustedKeys = keys;
      return this;
    }

    public Builder maxStreams(int maxStreams) {
      this.maxStreams = maxStreams;
      return this;
    }

    public Builder maxNames(int maxNames) {
      this.maxNames = maxNames;
      return this;
    }

    public Builder maxServices(int maxServices) {
      this.maxServices = maxServices;
      return this;
    }

    public XdsConfig build() {
      return new XdsConfig(listen, namespace, zonePriorities, outlier, failurePercentage, probe, probeFactory,
          trustedKeys, maxStreams, maxNames, maxServices);
    }
  }
}
