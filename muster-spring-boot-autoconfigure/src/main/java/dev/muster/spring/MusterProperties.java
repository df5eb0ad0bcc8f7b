package dev.muster.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Everything under {@code muster.*}. Setting {@code muster.endpoints} turns Muster on; the rest has defaults.
 *
 * @param enabled false turns Muster off although {@code muster.endpoints} is set (tests, a local run)
 * @param endpoints etcd's client URLs, comma-separated ({@code http://} or {@code https://})
 * @param namespace the namespace this application registers in and discovers from
 * @param requestTimeout each etcd request's deadline
 * @param user the etcd user (with {@code passwordFile}); without it, no etcd auth, or the client certificate's CN
 * @param passwordFile a file holding the etcd user's password (there is no password property on purpose)
 * @param insecureCredentials true sends the etcd user's password over {@code http://} endpoints that are not all
 *     loopback, where anyone on the path can read it (default false: the start fails; one WARN when allowed)
 * @param tls TLS to etcd: CA, client certificate and key, authority
 * @param instance how this application registers itself
 * @param discovery how this application finds others
 * @param loadbalancer whether Spring Cloud LoadBalancer uses Muster's engine, its panic threshold and slow start
 * @param health active probes of the instances this application calls
 */
@ConfigurationProperties("muster")
public record MusterProperties(
    @DefaultValue("true") boolean enabled,
    String endpoints,
    @DefaultValue("default") String namespace,
    @DefaultValue("2s") Duration requestTimeout,
    String user,
    Path passwordFile,
    @DefaultValue("false") boolean insecureCredentials,
    @DefaultValue Tls tls,
    @DefaultValue Instance instance,
    @DefaultValue Discovery discovery,
    @DefaultValue LoadBalancer loadbalancer,
    @DefaultValue Health health) {

  /**
   * TLS to etcd; all three files together turn it on ({@code https://} endpoints).
   *
   * @param cacert the CA that signed etcd's certificate (PEM)
   * @param cert this client's certificate (PEM), for mutual TLS
   * @param key this client's private key (PEM, PKCS#8)
   * @param authority the host name to check etcd's certificate against, when it is not the endpoints' host
   */
  public record Tls(Path cacert, Path cert, Path key, String authority) {}

  /**
   * This application's registration. Service name: {@code spring.application.name}; port: the one the web server
   * bound.
   *
   * @param id the instance id (default: {@code host-port-6 random hex})
   * @param address the host consumers dial (default: the first non-loopback IPv4 address, else 127.0.0.1)
   * @param version the service version it registers under
   * @param zone its zone, preferred by consumers in the same zone
   * @param region its region
   * @param weight its weight, 0-10000 (0 = registered but not picked)
   * @param tags free-form tags
   * @param metadata free-form key/value pairs
   * @param ttl the lease TTL (at least 2 s)
   * @param keepalive the keepalive interval (below a third of the TTL)
   * @param drain how long DRAINING is published before the web server stops taking requests
   * @param signKey an Ed25519 private key file (PEM, from {@code muster keygen}) to sign the instance's record with,
   *     so consumers that trust its public key can tell it from a forged one; unset: unsigned
   */
  public record Instance(
      String id,
      String address,
      @DefaultValue("v1") String version,
      String zone,
      String region,
      @DefaultValue("100") int weight,
      List<String> tags,
      Map<String, String> metadata,
      @DefaultValue("10s") Duration ttl,
      @DefaultValue("3s") Duration keepalive,
      @DefaultValue("5s") Duration drain,
      java.nio.file.Path signKey) {

    public Instance {
      tags = tags == null ? List.of() : List.copyOf(tags);
      metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }
  }

  /**
   * @param enabled whether every load-balanced client uses Muster's balancer and pushing supplier (default true);
   *     false leaves Spring Cloud's defaults (round robin, a discovery list cached for 35 s)
   * @param panicThreshold all-down protection: below this percent of UP instances routable (ejection, probes),
   *     route across all of them (Envoy's {@code healthy_panic_threshold}; 0: only when none is)
   * @param slowStart ramp the share of an instance that joins or recovers over this window (0s: off; Envoy's
   *     {@code slow_start_window}, linear, from 10 %)
   * @param retryBudget how many of Spring Cloud's retries each service this application calls may have
   */
  public record LoadBalancer(
      @DefaultValue("true") boolean enabled,
      @DefaultValue("50") int panicThreshold,
      @DefaultValue("0s") Duration slowStart,
      @DefaultValue RetryBudget retryBudget) {}

  /**
   * The retry budget of each service this application calls (Finagle's): in any window of {@code ttl}, retries
   * are at most {@code percentCanRetry} of the requests plus {@code minRetriesPerSecond} per second of the window.
   *
   * @param ttl the window deposits and withdrawals count for
   * @param percentCanRetry retries allowed per request, 0 to 1
   * @param minRetriesPerSecond a floor of retries allowed whatever the traffic, so a quiet service can retry
   */
  public record RetryBudget(
      @DefaultValue("10s") Duration ttl,
      @DefaultValue("0.2") double percentCanRetry,
      @DefaultValue("10") int minRetriesPerSecond) {}

  /**
   * Active probes of every instance of the services this application calls, in parallel with the lease.
   *
   * @param probe {@code http:/PATH} (GET, expecting {@code expect}), {@code tcp} (connect); unset: no probes
   * @param interval time between probes of one instance (±10 % jitter)
   * @param timeout a probe not answered within this fails
   * @param expect the HTTP statuses that pass, {@code 200} or a range such as {@code 200-399}
   * @param unhealthyThreshold failures in a row that take an instance out
   * @param healthyThreshold passes in a row that let it back
   */
  public record Health(
      String probe,
      @DefaultValue("5s") Duration interval,
      @DefaultValue("1s") Duration timeout,
      @DefaultValue("200") String expect,
      @DefaultValue("2") int unhealthyThreshold,
      @DefaultValue("2") int healthyThreshold) {}

  /**
   * Discovery and load balancing.
   *
   * @param version the version of the services this application calls
   * @param zone this application's own zone, for zone preference (default: {@code muster.instance.zone})
   * @param firstSetTimeout how long a first lookup of a service waits for its endpoint set
   * @param maxStale while etcd is unreachable, serve the last set for at most this long, then apply
   *     {@code stalePolicy}; unset: for the whole outage
   * @param stalePolicy after {@code maxStale}: {@code FAIL_CLOSED} (no new picks) or
   *     {@code KEEP_FAILING_ENDPOINTS_OUT} (only instances with a recent success)
   * @param trustKeys Ed25519 public key files (PEM): serve only instance records signed by one of them; an unsigned
   *     or forged record is excluded, counted, and never picked nor listed; unset: records are not checked
   */
  public record Discovery(
      @DefaultValue("v1") String version,
      String zone,
      @DefaultValue("10s") Duration firstSetTimeout,
      Duration maxStale,
      @DefaultValue("FAIL_CLOSED") dev.muster.balance.StalePolicy stalePolicy,
      List<java.nio.file.Path> trustKeys) {

    public Discovery {
      trustKeys = trustKeys == null ? List.of() : List.copyOf(trustKeys);
    }
  }
}
