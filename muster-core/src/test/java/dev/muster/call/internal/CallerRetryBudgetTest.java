package dev.muster.call.internal;

import static dev.muster.balance.TestEndpoints.instance;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.balance.FakeTicker;
import dev.muster.balance.TestEndpoints;
import dev.muster.cache.EndpointSet;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallResult;
import dev.muster.call.FakeScheduler;
import dev.muster.call.Idempotent;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Nine endpoints of ten refuse every connection and ejection is off, so nearly every call wants a retry: the budget,
 * not the failures, must decide how many happen.
 */
class CallerRetryBudgetTest {
  private static final int CALLS = 20_000;
  private static final Duration BETWEEN_CALLS = Duration.ofMillis(1); // 1,000 calls/s for 20 s

  private final FakeTicker ticker = new FakeTicker();
  private final RetryConfig config = RetryConfig.defaults();
  private final RetryBudget budget = new RetryBudget(config, ticker);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void retriesStayWithinAFifthOfTheRequestsPlusTheFloorWhenNineOfTenEndpointsFail() {
    List<Instance> instances = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      instances.add(instance("e" + i));
    }
    Balancer balancer = TestEndpoints.balancer(BalancerConfig.builder().policy(Policy.WEIGHTED_RANDOM).build(),
        OutlierConfig.builder().enabled(false).build(), ticker, 9, null);
    balancer.update(EndpointSet.of(1, instances));
    Caller caller = new Caller(balancer, budget, config, ticker, new FakeScheduler(ticker),
        new MicrometerCallMetrics(registry, "orders"));
    Attempt<String> onlyE0Answers = (target, timeout) -> CompletableFuture.completedFuture(
        target.id().equals("e0")
            ? AttemptResult.success("ok")
            : AttemptResult.localOriginFailure(new ConnectException("refused")));

    int retried = 0;
    int refusedCalls = 0;
    int ok = 0;
    for (int i = 0; i < CALLS; i++) {
      CallResult<String> result = caller.call(onlyE0Answers, Idempotent.YES).join();
      retried += result.retried() ? 1 : 0;
      refusedCalls += result.budgetRefused() ? 1 : 0;
      ok += result.ok() ? 1 : 0;
      ticker.advance(BETWEEN_CALLS);
    }

    double seconds = CALLS * BETWEEN_CALLS.toNanos() / 1e9;
    double floor = config.budgetMinRetriesPerSecond() * (seconds + config.budgetTtl().toSeconds());
    assertThat(retried).isLessThanOrEqualTo((int) (0.2 * CALLS + floor));
    assertThat(retried).as("the budget is used, not just refused").isGreaterThan((int) (0.18 * CALLS));
    // ~90 % of first attempts fail and want a retry; most of them are refused, and each refusal is counted
    assertThat(refusedCalls).isGreaterThan(CALLS / 2);
    assertThat(budget.refused()).isEqualTo(refusedCalls);
    assertThat(registry.get("muster.call.budget.refusals").counter().count()).isEqualTo(refusedCalls);
    assertThat(registry.get("muster.call.retries").counter().count()).isEqualTo(retried);
    assertThat(budget.deposits()).isEqualTo(CALLS);
    assertThat(ok).isBetween((int) (0.1 * CALLS), (int) (0.1 * CALLS + retried));
  }
}
