package dev.muster.call.internal;

import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.balance.FakeTicker;
import dev.muster.balance.TestEndpoints;
import dev.muster.call.AttemptResult;
import dev.muster.call.FakeScheduler;
import dev.muster.call.Idempotent;
import dev.muster.outlier.OutlierConfig;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class MicrometerCallMetricsTest {
  private final FakeTicker ticker = new FakeTicker();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private double count(String name, String... tags) {
    return registry.get(name).tag("service", "orders").tags(tags).counter().count();
  }

  @Test
  void aCallThatFailsOverCountsEveryStepTaggedWithTheService() {
    Balancer balancer = TestEndpoints.balancer(BalancerConfig.builder().policy(Policy.ROUND_ROBIN).build(),
        OutlierConfig.defaults(), ticker, 1, null);
    balancer.update(set(instance("a"), instance("b")));
    RetryConfig config = RetryConfig.defaults();
    Caller caller = new Caller(balancer, new RetryBudget(config, ticker), config, ticker, new FakeScheduler(ticker),
        new MicrometerCallMetrics(registry, "orders"));

    caller.call((target, timeout) -> CompletableFuture.completedFuture(target.id().equals("a")
        ? AttemptResult.localOriginFailure(new IOException("reset"))
        : AttemptResult.serverError("busy", new IOException("HTTP 503"))), Idempotent.YES).join();

    assertThat(count("muster.call.picks")).isEqualTo(2);
    assertThat(count("muster.call.attempts")).isEqualTo(2);
    assertThat(count("muster.call.failures", "kind", "local_origin")).isEqualTo(1);
    assertThat(count("muster.call.failures", "kind", "http_5xx")).isEqualTo(1);
    assertThat(count("muster.call.ejections")).isEqualTo(1);
    assertThat(count("muster.call.retries")).isEqualTo(1);
    assertThat(count("muster.call.budget.refusals")).isZero();
    assertThat(count("muster.call.no.endpoint")).isZero();
  }

  @Test
  void aCallWithNoEndpointIsCounted() {
    Balancer balancer = TestEndpoints.balancer(BalancerConfig.defaults(), ticker);
    Caller caller = new Caller(balancer, new RetryBudget(RetryConfig.defaults(), ticker), RetryConfig.defaults(),
        ticker, new FakeScheduler(ticker), new MicrometerCallMetrics(registry, "orders"));

    caller.call((target, timeout) -> new CompletableFuture<>(), Idempotent.YES).join();

    assertThat(count("muster.call.no.endpoint")).isEqualTo(1);
    assertThat(count("muster.call.attempts")).isZero();
  }
}
