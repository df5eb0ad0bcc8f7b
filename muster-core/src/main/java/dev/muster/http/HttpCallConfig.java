package dev.muster.http;

import dev.muster.balance.BalancerConfig;
import dev.muster.outlier.OutlierConfig;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;

/**
 * How {@link MusterHttp} calls every service: balancing, ejection, retries, and where metrics go. Immutable.
 *
 * @param balancer balancing policy and zone preference ({@link BalancerConfig#defaults()})
 * @param outlier local ejection ({@link OutlierConfig#defaults()}; {@code enabled(false)} turns it off)
 * @param retry retries, attempt timeout and budget ({@link RetryConfig#defaults()}; {@code maxRetries(0)} turns
 *     retries off)
 * @param meters Micrometer registry for the call metrics, or null for none
 */
public record HttpCallConfig(BalancerConfig balancer, OutlierConfig outlier, RetryConfig retry, MeterRegistry meters) {
  public HttpCallConfig {
    Objects.requireNonNull(balancer, "balancer");
    Objects.requireNonNull(outlier, "outlier");
    Objects.requireNonNull(retry, "retry");
  }

  public static HttpCallConfig defaults() {
    return new HttpCallConfig(BalancerConfig.defaults(), OutlierConfig.defaults(), RetryConfig.defaults(), null);
  }

  public HttpCallConfig withBalancer(BalancerConfig b) {
    return new HttpCallConfig(b, outlier, retry, meters);
  }

  public HttpCallConfig withOutlier(OutlierConfig o) {
    return new HttpCallConfig(balancer, o, retry, meters);
  }

  public HttpCallConfig withRetry(RetryConfig r) {
    return new HttpCallConfig(balancer, outlier, r, meters);
  }

  public HttpCallConfig withMeters(MeterRegistry m) {
    return new HttpCallConfig(balancer, outlier, retry, m);
  }
}
