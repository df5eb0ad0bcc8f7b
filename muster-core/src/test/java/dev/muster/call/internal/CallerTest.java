package dev.muster.call.internal;

import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.BalancerConfig.Policy;
import dev.muster.balance.EndpointState;
import dev.muster.balance.FakeTicker;
import dev.muster.balance.TestEndpoints;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallMetrics;
import dev.muster.call.CallResult;
import dev.muster.call.FakeScheduler;
import dev.muster.call.Idempotent;
import dev.muster.call.NoEndpointException;
import dev.muster.outlier.Outcome;
import dev.muster.outlier.OutlierConfig;
import dev.muster.registry.Instance;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class CallerTest {
  private final FakeTicker ticker = new FakeTicker();
  private final FakeScheduler scheduler = new FakeScheduler(ticker);
  private final RetryConfig retry = RetryConfig.builder().attemptTimeout(Duration.ofMillis(300)).build();
  private final RetryBudget budget = new RetryBudget(retry, ticker);
  private Balancer balancer = balancer(OutlierConfig.defaults(), instance("a"), instance("b"), instance("c"));
  private Caller caller = caller(retry);

  private Balancer balancer(OutlierConfig outliers, Instance... instances) {
    return balancer(Policy.ROUND_ROBIN, outliers, instances);
  }

  private Balancer balancer(Policy policy, OutlierConfig outliers, Instance... instances) {
    Balancer b = TestEndpoints.balancer(BalancerConfig.builder().policy(policy).build(), outliers, ticker, 3, null);
    b.update(set(instances));
    return b;
  }

  private Caller caller(RetryConfig config) {
    return new Caller(balancer, budget, config, ticker, scheduler, CallMetrics.noop());
  }

  private EndpointState endpoint(String id) {
    return balancer.endpoints().stream().filter(e -> e.instance().id().equals(id)).findFirst().orElseThrow();
  }

  /** Succeeds with the target's id, except on the ids in {@code failing}, which refuse the connection. */
  private static Attempt<String> failingOn(Set<String> failing) {
    return (target, timeout) -> CompletableFuture.completedFuture(failing.contains(target.id())
        ? AttemptResult.localOriginFailure(new ConnectException("refused by " + target.id()))
        : AttemptResult.success(target.id()));
  }

  private static <T> CallResult<T> done(CompletableFuture<CallResult<T>> f) {
    assertThat(f).isDone();
    return f.join();
  }

  @Test
  void aSuccessfulCallMakesOneAttemptAndReturnsItsValue() {
    CallResult<String> result = done(caller.call(failingOn(Set.of()), Idempotent.YES));

    assertThat(result.ok()).isTrue();
    assertThat(result.value()).isEqualTo("a");
    assertThat(result.endpointsTried()).containsExactly("a");
    assertThat(result.retried()).isFalse();
    assertThat(endpoint("a").inFlight()).isZero();
    assertThat(scheduler.pending()).as("deadline cancelled").isZero();
  }

  @Test
  void aFailedIdempotentCallIsRetriedOnADifferentEndpoint() {
    CallResult<String> result = done(caller.call(failingOn(Set.of("a")), Idempotent.YES));

    assertThat(result.ok()).isTrue();
    assertThat(result.endpointsTried()).hasSize(2).startsWith("a").doesNotHaveDuplicates();
    assertThat(result.value()).isEqualTo(result.endpointsTried().get(1));
    assertThat(result.retried()).isTrue();
    assertThat(budget.withdrawals()).isEqualTo(1);
  }

  @Test
  void aRetryAvoidsTheFailedEndpointEvenWhenItIsNotEjected() {
    balancer = balancer(Policy.WEIGHTED_RANDOM, OutlierConfig.builder().enabled(false).build(), instance("a"),
        instance("b"), instance("c"));
    caller = caller(retry);
    Attempt<String> firstAttemptFails = new Attempt<>() {
      int n;

      @Override
      public CompletableFuture<AttemptResult<String>> run(Instance target, Duration timeout) {
        return CompletableFuture.completedFuture(n++ % 2 == 0
            ? AttemptResult.serverError(null, new IOException("HTTP 503 from " + target.id()))
            : AttemptResult.success(target.id()));
      }
    };

    for (int i = 0; i < 80; i++) { // fewer than the budget's floor of 100 retries
      List<String> tried = done(caller.call(firstAttemptFails, Idempotent.YES)).endpointsTried();
      assertThat(tried).hasSize(2).doesNotHaveDuplicates();
    }
  }

  @Test
  void aNonIdempotentCallIsNeverRetried() {
    CallResult<String> result = done(caller.call(failingOn(Set.of("a")), Idempotent.NO));

    assertThat(result.ok()).isFalse();
    assertThat(result.failure()).isInstanceOf(ConnectException.class).hasMessage("refused by a");
    assertThat(result.outcome()).isEqualTo(Outcome.LOCAL_ORIGIN_FAILURE);
    assertThat(result.endpointsTried()).containsExactly("a");
    assertThat(budget.withdrawals()).isZero();
  }

  @Test
  void thereIsNoRetryWhenNoOtherEndpointExistsAndTheBudgetIsNotCharged() {
    balancer = balancer(OutlierConfig.defaults(), instance("a"));
    caller = caller(retry);

    CallResult<String> result = done(caller.call(failingOn(Set.of("a")), Idempotent.YES));

    assertThat(result.endpointsTried()).containsExactly("a");
    assertThat(result.budgetRefused()).isFalse();
    assertThat(budget.withdrawals()).isZero();
    assertThat(budget.refused()).isZero();
  }

  @Test
  void retriesStopAtMaxRetriesEachOnAnotherEndpointThanTheLast() {
    caller = caller(retry.toBuilder().maxRetries(2).build());

    CallResult<String> result = done(caller.call(failingOn(Set.of("a", "b", "c")), Idempotent.YES));

    assertThat(result.ok()).isFalse();
    assertThat(result.attempts()).isEqualTo(3);
    assertThat(result.endpointsTried()).doesNotHaveDuplicates();
  }

  @Test
  void anAttemptPastItsDeadlineIsALocalOriginFailureAndTheNextEndpointIsTried() {
    CompletableFuture<AttemptResult<String>> hanging = new CompletableFuture<>();
    Attempt<String> attempt = (target, timeout) -> target.id().equals("a")
        ? hanging : CompletableFuture.completedFuture(AttemptResult.success(target.id()));

    CompletableFuture<CallResult<String>> call = caller.call(attempt, Idempotent.YES);
    scheduler.advance(Duration.ofMillis(299));
    assertThat(call).isNotDone();
    assertThat(endpoint("a").inFlight()).isEqualTo(1);
    scheduler.advance(Duration.ofMillis(1));

    CallResult<String> result = done(call);
    assertThat(result.ok()).isTrue();
    assertThat(result.endpointsTried()).hasSize(2).startsWith("a").doesNotHaveDuplicates();
    assertThat(hanging).as("the transport is told to abort").isCancelled();
    EndpointState a = endpoint("a");
    assertThat(a.inFlight()).isZero();
    assertThat(a.ewmaLatency()).isEqualTo(Duration.ofMillis(300));
    assertThat(a.isEjected()).isTrue();
  }

  @Test
  void aCallWhoseEveryAttemptTimesOutFailsWithATimeout() {
    balancer = balancer(OutlierConfig.defaults(), instance("a"));
    caller = caller(retry);

    CompletableFuture<CallResult<String>> call =
        caller.call((target, timeout) -> new CompletableFuture<>(), Idempotent.YES);
    scheduler.advance(Duration.ofMillis(300));

    assertThat(done(call).failure()).isInstanceOf(TimeoutException.class)
        .hasMessage("attempt to default/orders/v1/a timed out after 300 ms");
  }

  @Test
  void exceptionsFromTheTransportCountAsLocalOriginFailures() {
    IllegalStateException thrown = new IllegalStateException("bad request builder");
    Attempt<String> throwing = (target, timeout) -> {
      throw thrown;
    };
    Attempt<String> failedFuture = (target, timeout) -> CompletableFuture.failedFuture(new IOException("reset"));

    CallResult<String> first = done(caller.call(throwing, Idempotent.NO));
    CallResult<String> second = done(caller.call(failedFuture, Idempotent.NO));

    assertThat(first.failure()).isSameAs(thrown);
    assertThat(first.outcome()).isEqualTo(Outcome.LOCAL_ORIGIN_FAILURE);
    assertThat(second.failure()).isInstanceOf(IOException.class).hasMessage("reset");
    assertThat(second.outcome()).isEqualTo(Outcome.LOCAL_ORIGIN_FAILURE);
  }

  @Test
  void aCallWithNoEndpointFailsWithoutAnAttempt() {
    balancer = balancer(OutlierConfig.defaults());
    caller = caller(retry);

    CallResult<String> result = done(caller.call(failingOn(Set.of()), Idempotent.YES));

    assertThat(result.ok()).isFalse();
    assertThat(result.failure()).isInstanceOf(NoEndpointException.class);
    assertThat(result.attempts()).isZero();
    assertThat(result.outcome()).isNull();
  }

  @Test
  void aCancelledCallIsNotRetried() {
    List<String> targets = new ArrayList<>();
    CompletableFuture<CallResult<String>> call = caller.call((target, timeout) -> {
      targets.add(target.id());
      return new CompletableFuture<>();
    }, Idempotent.YES);

    call.cancel(false);
    scheduler.advance(Duration.ofSeconds(1));

    assertThat(targets).containsExactly("a");
    assertThat(endpoint("a").inFlight()).isZero();
  }
}
