package dev.muster.console;

import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How {@link ConsoleServer} serves: where it listens, which namespaces it shows, whether it may drain, and how
 * often it asks etcd for what no cache holds. Immutable; {@link #defaults()} or {@link #builder()}, checked in
 * {@link Builder#build()} with messages naming the field and the bad value.
 *
 * @param listen where the HTTP server binds; {@code 127.0.0.1:8080} by default (port 0 picks a free one)
 * @param namespaces the namespaces shown; empty (the default) shows every namespace, as namespaces come and go
 * @param allowDrain whether the service page offers a Drain button and {@code POST /api/drain} is served
 * @param quota the etcd backend quota the DB size is shown against (etcd 3.4 does not report it); 2 GiB by default,
 *     etcd's own default
 * @param directoryRefresh new services, namespaces and services gone are seen at once, by a watch of the registry's
 *     keys ({@link dev.muster.etcd.ServiceDirectory}); this is how often the keys are read again as a check of that
 *     watch; 5 min, at least 1 s
 * @param leaseRefresh the shortest interval between two reads of a viewed service's leases; 2 s
 * @param clusterRefresh the shortest interval between two reads of member status, list and alarms while the cluster
 *     page is viewed; 3 s
 * @param eventCapacity how many events the console keeps (the oldest go first); 500
 * @param maxClients event streams served at once; more get 503; 32
 * @param trustedKeys show only records signed by one of these keys (for their service): an unsigned or forged record
 *     is excluded by the service's cache, counted, and never shown; none (the default): records are not checked
 */
public record ConsoleConfig(InetSocketAddress listen, List<String> namespaces, boolean allowDrain, long quota,
    Duration directoryRefresh, Duration leaseRefresh, Duration clusterRefresh, int eventCapacity, int maxClients,
    List<TrustedKey> trustedKeys) {
  /** etcd's default backend quota, 2 GiB. */
  public static final long DEFAULT_QUOTA = 2L * 1024 * 1024 * 1024;

  public ConsoleConfig {
    Objects.requireNonNull(listen, "listen");
    namespaces = List.copyOf(namespaces);
    trustedKeys = trustedKeys == null ? List.of() : List.copyOf(trustedKeys);
    for (String ns : namespaces) {
      Names.requireValid("namespace", ns);
    }
    requirePositive("quota", quota);
    if (directoryRefresh == null || directoryRefresh.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new dev.muster.InvalidInputException("directoryRefresh", directoryRefresh, "use 1s or more, such as 5m:"
          + " new services are seen at once by the watch; this only paces its check");
    }
    requirePositive("leaseRefresh", leaseRefresh);
    requirePositive("clusterRefresh", clusterRefresh);
    requirePositive("eventCapacity", eventCapacity);
    requirePositive("maxClients", maxClients);
  }

  public static ConsoleConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.listen = listen;
    b.namespaces = namespaces;
    b.allowDrain = allowDrain;
    b.quota = quota;
    b.directoryRefresh = directoryRefresh;
    b.leaseRefresh = leaseRefresh;
    b.clusterRefresh = clusterRefresh;
    b.eventCapacity = eventCapacity;
    b.maxClients = maxClients;
    b.trustedKeys = trustedKeys;
    return b;
  }

  private static void requirePositive(String field, long value) {
    if (value <= 0) {
      throw new InvalidInputException(field, String.valueOf(value), "must be positive");
    }
  }

  private static void requirePositive(String field, Duration value) {
    Objects.requireNonNull(value, field);
    if (value.isNegative() || value.isZero()) {
      throw new InvalidInputException(field, value.toString(), "must be positive");
    }
  }

  /** Builds a {@link ConsoleConfig}; every setter may be called in any order, {@link #build()} checks them all. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress(InetAddress.getLoopbackAddress(), 8080);
    private List<String> namespaces = List.of();
    private boolean allowDrain;
    private long quota = DEFAULT_QUOTA;
    private Duration directoryRefresh = dev.muster.etcd.ServiceDirectory.DEFAULT_RELIST;
    private Duration leaseRefresh = Duration.ofSeconds(2);
    private Duration clusterRefresh = Duration.ofSeconds(3);
    private int eventCapacity = 500;
    private int maxClients = 32;
    private List<TrustedKey> trustedKeys = List.of();

    private Builder() {}

    public Builder listen(InetSocketAddress listen) {
      this.listen = listen;
      return this;
    }

    public Builder namespaces(List<String> namespaces) {
      this.namespaces = namespaces;
      return this;
    }

    public Builder allowDrain(boolean allowDrain) {
      this.allowDrain = allowDrain;
      return this;
    }

    public Builder quota(long bytes) {
      this.quota = bytes;
      return this;
    }

    public Builder directoryRefresh(Duration every) {
      this.directoryRefresh = every;
      return this;
    }

    public Builder leaseRefresh(Duration every) {
      this.leaseRefresh = every;
      return this;
    }

    public Builder clusterRefresh(Duration every) {
      this.clusterRefresh = every;
      return this;
    }

    public Builder eventCapacity(int events) {
      this.eventCapacity = events;
      return this;
    }

    public Builder maxClients(int clients) {
      this.maxClients = clients;
      return this;
    }

    /** Show only records signed by one of {@code keys} (none: not checked). */
    public Builder trustedKeys(List<TrustedKey> keys) {
      this.trustedKeys = keys;
      return this;
    }

    public ConsoleConfig build() {
      if (listen == null) {
        throw new InvalidInputException("listen", "null", "give an address such as 127.0.0.1:8080");
      }
      if (listen.isUnresolved()) {
        throw new InvalidInputException("listen", listen.getHostString(), "is not resolved; give an IP address");
      }
      if (namespaces == null) {
        throw new InvalidInputException("namespaces", "null", "give an empty list for every namespace");
      }
      return new ConsoleConfig(listen, namespaces, allowDrain, quota, directoryRefresh, leaseRefresh, clusterRefresh,
          eventCapacity, maxClients, trustedKeys);
    }
  }
}
