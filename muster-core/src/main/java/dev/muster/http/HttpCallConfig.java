package dev.muster.http;

import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig;
import dev.muster.client.MusterClient;
import dev.muster.outlier.OutlierConfig;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.MeterRegistry;
import dev.muster.health.HealthListener;
import dev.muster.health.Probe;
import dev.muster.health.ProbeConfig;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * How {@link MusterHttp} calls every service: balancing, ejection, retries, where metrics go, how long a call
 * waits for a service's first endpoint set, and the TLS of {@code https} calls. Immutable.
 *
 * @param balancer balancing policy and zone preference ({@link BalancerConfig#defaults()})
 * @param outlier local ejection ({@link OutlierConfig#defaults()}; {@code enabled(false)} turns it off)
 * @param retry retries, attempt timeout and budget ({@link RetryConfig#defaults()}; {@code maxRetries(0)} turns
 *     retries off)
 * @param meters Micrometer registry for the call metrics, or null for none
 * @param firstSetTimeout how long a call made before its service's first endpoint set waits for it
 *     ({@link MusterClient#DEFAULT_FIRST_SET_TIMEOUT}, 10 s)
 * @param probe active probes for every service's endpoints, or null for none (default none)
 * @param probeFactory makes the probe for each service's client (e.g. a gRPC health probe), or null for the
 *     built-in HTTP and TCP probes
 * @param healthEvents where each service's health events go, or null for nowhere
 * @param sslContext the TLS of {@code https} calls: the trust store that checks each provider's certificate (and
 *     any client certificate presented), or null for the JDK's default ({@link SSLContext#getDefault()}, the
 *     JVM's trusted CAs); the certificate must name the endpoint's registered address (an IP SAN for an IP)
 * @param sslParameters protocols and cipher suites of {@code https} calls, or null for the JDK client's defaults
 */
public record HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters,
    Duration firstSetTimeout, ProbeConfig probe, Supplier<Probe> probeFactory, HealthListener healthEvents,
    SSLContext sslContext, SSLParameters sslParameters) {
  public HttpCallConfig {
    Objects.requireNonNull(balancer, "balancer");
    Objects.requireNonNull(outlier, "outlier");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(firstSetTimeout, "firstSetTimeout");
    if (firstSetTimeout.isNegative()) {
      throw new InvalidInputException("firstSetTimeout", firstSetTimeout, "use zero or a positive duration");
    }
  }

  /** The config with the JDK's TLS defaults (the constructor of the eight-field version). */
  public HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters,
      Duration firstSetTimeout, ProbeConfig probe, Supplier<Probe> probeFactory, HealthListener healthEvents) {
    this(balancer, outlier, retry, meters, firstSetTimeout, probe, probeFactory, healthEvents, null, null);
  }

  public HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters,
      Duration firstSetTimeout) {
    this(balancer, outlier, retry, meters, firstSetTimeout, null, null, null);
  }

  /** The config with the default first-set timeout (the constructor of the four-field version). */
  public HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters) {
    this(balancer, outlier, retry, meters, MusterClient.DEFAULT_FIRST_SET_TIMEOUT);
  }

  public static HttpCallConfig defaults() {
    return new HttpCallConfig(BalancerConfig.defaults(), OutlierConfig.defaults(), RetryConfig.defaults(), null);
  }

  public HttpCallConfig withBalancer(BalancerConfig b) {
    return new HttpCallConfig(b, outlier, retry, meters, firstSetTimeout, probe, probeFactory, healthEvents,
        sslContext, sslParameters);
  }

  public HttpCallConfig withOutlier(OutlierConfig o) {
    return new HttpCallConfig(balancer, o, retry, meters, firstSetTimeout, probe, probeFactory, healthEvents,
        sslContext, sslParameters);
  }

  public HttpCallConfig withRetry(RetryConfig r) {
    return new HttpCallConfig(balancer, outlier, r, meters, firstSetTimeout, probe, probeFactory, healthEvents,
        sslContext, sslParameters);
  }

  public HttpCallConfig withMeters(MeterRegistry m) {
    return new HttpCallConfig(balancer, outlier, retry, m, firstSetTimeout, probe, probeFactory, healthEvents,
        sslContext, sslParameters);
  }

  public HttpCallConfig withFirstSetTimeout(Duration timeout) {
    return new HttpCallConfig(balancer, outlier, retry, meters, timeout, probe, probeFactory, healthEvents,
        sslContext, sslParameters);
  }

  /** Probes every endpoint with {@code config}, through {@code factory}'s probes (null: the built-in ones). */
  public HttpCallConfig withProbe(ProbeConfig config, Supplier<Probe> factory) {
    return new HttpCallConfig(balancer, outlier, retry, meters, firstSetTimeout, config, factory, healthEvents,
        sslContext, sslParameters);
  }

  public HttpCallConfig withHealthEvents(HealthListener listener) {
    return new HttpCallConfig(balancer, outlier, retry, meters, firstSetTimeout, probe, probeFactory, listener,
        sslContext, sslParameters);
  }

  /**
   * Makes {@code https} calls with {@code context} (the trust store that checks each provider's certificate, and
   * the client certificate if any) and {@code parameters} (null: the JDK client's defaults).
   */
  public HttpCallConfig withTls(SSLContext context, SSLParameters parameters) {
    return new HttpCallConfig(balancer, outlier, retry, meters, firstSetTimeout, probe, probeFactory, healthEvents,
        Objects.requireNonNull(context, "context"), parameters);
  }
}
