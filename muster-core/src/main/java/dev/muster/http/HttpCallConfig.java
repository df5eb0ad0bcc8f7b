package dev.muster.http;

import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig;
import dev.muster.client.MusterClient;
import dev.muster.outlier.OutlierConfig;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.Objects;

/**
 * How {@link MusterHttp} calls every service: balancing, ejection, retries, where metrics go, and how long a call
 * waits for a service's first endpoint set. Immutable.
 *
 * @param balancer balancing policy and zone preference ({@link BalancerConfig#defaults()})
 * @param outlier local ejection ({@link OutlierConfig#defaults()}; {@code enabled(false)} turns it off)
 * @param retry retries, attempt timeout and budget ({@link RetryConfig#defaults()}; {@code maxRetries(0)} turns
 *     retries off)
 * @param meters Micrometer registry for the call metrics, or null for none
 * @param firstSetTimeout how long a call made before its service's first endpoint set waits for it
 *     ({@link MusterClient#DEFAULT_FIRST_SET_TIMEOUT}, 10 s)
 */
public record HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters,
    Duration firstSetTimeout) {
  public HttpCallConfig {
    Objects.requireNonNull(balancer, "balancer");
    Objects.requireNonNull(outlier, "outlier");
    Objects.requireNonNull(retry, "retry");
    Objects.requireNonNull(firstSetTimeout, "firstSetTimeout");
    if (firstSetTimeout.isNegative()) {
      throw new InvalidInputException("firstSetTimeout", firstSetTimeout, "use zero or a positive duration");
    }
  }

  /** The config with the default first-set timeout (the constructor of the four-field version). */
  public HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters) {
    this(balancer, outlier, retry, meters, MusterClient.DEFAULT_FIRST_SET_TIMEOUT);
  }

  public static HttpCallConfig defaults() {
    return new HttpCallConfig(BalancerConfig.defaults(), OutlierConfig.defaults(), RetryConfig.defaults(), null);
  }

  public HttpCallConfig withBalancer(BalancerConfig b) {
    return new HttpCallConfig(b, outlier, retry, meters, firstSetTimeout);
  }

  public HttpCallConfig withOutlier(OutlierConfig o) {
    return new HttpCallConfig(balancer, o, retry, meters, firstSetTimeout);
  }

  public HttpCallConfig withRetry(RetryConfig r) {
    return new HttpCallConfig(balancer, outlier, r, meters, firstSetTimeout);
  }

  public HttpCallConfig withMeters(MeterRegistry m) {
    return new HttpCallConfig(balancer, outlier, retry, m, firstSetTimeout);
  }

  public HttpCallConfig withFirstSetTimeout(Duration timeout) {
    return new HttpCallConfig(balancer, outlier, retry, meters, timeout);
  }
}
