package dev.muster.call.internal;

import dev.muster.balance.Balancer;
import dev.muster.balance.EndpointState;
import dev.muster.call.Attempt;
import dev.muster.call.AttemptResult;
import dev.muster.call.CallMetrics;
import dev.muster.call.CallResult;
import dev.muster.call.Idempotent;
import dev.muster.call.NoEndpointException;
import dev.muster.call.Scheduler;
import dev.muster.outlier.OutlierDetector;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/*
 * One call, as a chain of attempts (SPEC §5):
 *
 *   deposit one request into the retry budget
 *   pick -> none: fail with NoEndpointException, no attempt
 *   attempt: started(); run with the attempt timeout; whichever comes first of the transport's result and the
 *            engine's deadline settles it (a deadline is a LOCAL_ORIGIN_FAILURE, and the transport's future is
 *            cancelled); finished(latency); the outcome goes to the outlier detector
 *   success -> done
 *   failure -> retry only if: the call is idempotent, retries are left (maxRetries), a DIFFERENT endpoint can be
 *              picked (if not, the budget is not charged), and the budget allows it (if not, budgetRefused)
 *
 * Attempts of one call never overlap, so the per-call state needs no lock: each attempt starts after the previous
 * one settled, and CompletableFuture completion orders the two (happens-before).
 */
/**
 * The transport-independent call engine: picks an endpoint, runs an {@link Attempt} with a deadline, feeds the
 * outcome to the balancer's outlier detector, and retries idempotent calls on a different endpoint within the retry
 * budget.
 *
 * <p>Thread-safe and non-blocking: {@link #call} may be called from any thread and returns at once. The returned
 * future completes on the thread that settles the last attempt (a transport thread, the {@link Scheduler}'s thread
 * for a deadline, or the calling thread when the attempt completes at once); do not block in its callbacks.
 */
public final class Caller {
  private final Balancer balancer;
  private final OutlierDetector detector;
  private final RetryBudget budget;
  private final int maxRetries;
  private final Duration attemptTimeout;
  private final LongSupplier nanoTime;
  private final Scheduler scheduler;
  private final CallMetrics metrics;

  /**
   * @param balancer the service's balancer; its {@link Balancer#detector()} receives every outcome
   * @param budget the service's retry budget, shared by every call through this caller
   * @param config {@code maxRetries} and {@code attemptTimeout} (the budget's own values are {@code budget}'s)
   * @param nanoTime the monotonic ticker that measures attempt latency ({@code System::nanoTime})
   * @param scheduler runs attempt deadlines ({@link Scheduler#system()})
   * @param metrics where events go ({@link CallMetrics#noop()} for none)
   */
  public Caller(Balancer balancer, RetryBudget budget, RetryConfig config, LongSupplier nanoTime,
      Scheduler scheduler, CallMetrics metrics) {
    this.balancer = Objects.requireNonNull(balancer, "balancer");
    this.detector = balancer.detector();
    this.budget = Objects.requireNonNull(budget, "budget");
    this.maxRetries = Objects.requireNonNull(config, "config").maxRetries();
    this.attemptTimeout = config.attemptTimeout();
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.metrics = Objects.requireNonNull(metrics, "metrics");
  }

  /** A caller on the system ticker and deadline scheduler, with its own budget built from {@code config}. */
  public static Caller create(Balancer balancer, RetryConfig config, CallMetrics metrics) {
    return new Caller(balancer, new RetryBudget(config, System::nanoTime), config, System::nanoTime,
        Scheduler.system(), metrics);
  }

  public RetryBudget budget() {
    return budget;
  }

  /**
   * Runs {@code attempt} against a picked endpoint, retrying as described above. The future always completes
   * normally, with a {@link CallResult} that says how the call ended; cancelling it stops further retries.
   */
  public <T> CompletableFuture<CallResult<T>> call(Attempt<T> attempt, Idempotent idempotent) {
    Objects.requireNonNull(attempt, "attempt");
    Objects.requireNonNull(idempotent, "idempotent");
    budget.deposit();
    EndpointState first = balancer.pick();
    if (first == null) {
      metrics.noEndpoint();
      return CompletableFuture.completedFuture(new CallResult<>(null,
          new NoEndpointException("no endpoint to call: the balancer's endpoint set is empty"), null, List.of(),
          false));
    }
    metrics.picked();
    Run<T> run = new Run<>(attempt, idempotent == Idempotent.YES);
    run.start(first);
    return run.result;
  }

  /** The state of one call. Touched by one attempt at a time (see the comment at the top). */
  private final class Run<T> {
    final Attempt<T> attempt;
    final boolean idempotent;
    final CompletableFuture<CallResult<T>> result = new CompletableFuture<>();
    final List<String> tried = new ArrayList<>(2);
    boolean budgetRefused;

    Run(Attempt<T> attempt, boolean idempotent) {
      this.attempt = attempt;
      this.idempotent = idempotent;
    }

    void start(EndpointState endpoint) {
      tried.add(endpoint.instance().id());
      metrics.attempted();
      endpoint.started();
      long startNanos = nanoTime.getAsLong();
      CompletableFuture<AttemptResult<T>> running = launch(endpoint);
      CompletableFuture<AttemptResult<T>> settled = new CompletableFuture<>();
      Runnable cancelDeadline = scheduler.schedule(() -> {
        if (settled.complete(AttemptResult.localOriginFailure(new TimeoutException("attempt to "
            + endpoint.key().path() + " timed out after " + attemptTimeout.toMillis() + " ms")))) {
          running.cancel(false);
        }
      }, attemptTimeout);
      running.whenComplete((r, e) -> settled.complete(normalize(r, e)));
      settled.thenAccept(r -> {
        cancelDeadline.run();
        try {
          settle(endpoint, startNanos, r);
        } catch (RuntimeException | Error e) {
          result.completeExceptionally(e);
        }
      });
    }

    private CompletableFuture<AttemptResult<T>> launch(EndpointState endpoint) {
      try {
        CompletableFuture<AttemptResult<T>> f = attempt.run(endpoint.instance(), attemptTimeout);
        return f != null ? f : CompletableFuture.failedFuture(
            new IllegalStateException("Attempt.run returned null: return a future of an AttemptResult"));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }

    private void settle(EndpointState endpoint, long startNanos, AttemptResult<T> r) {
      long now = nanoTime.getAsLong();
      endpoint.finished(Duration.ofNanos(now - startNanos));
      balancer.outcome(endpoint, r.ok(), now);
      if (detector.record(endpoint.outlier(), r.outcome())) {
        metrics.ejected();
      }
      if (r.ok()) {
        finish(r);
        return;
      }
      metrics.failed(r.outcome());
      if (idempotent && tried.size() <= maxRetries && !result.isDone()) {
        EndpointState next = balancer.pick(endpoint);
        if (next != null) {
          if (budget.tryWithdraw()) {
            metrics.picked();
            metrics.retried();
            start(next);
            return;
          }
          budgetRefused = true;
          metrics.budgetRefused();
        }
      }
      finish(r);
    }

    private void finish(AttemptResult<T> last) {
      result.complete(new CallResult<>(last.value(), last.failure(), last.outcome(), tried, budgetRefused));
    }
  }

  private static <T> AttemptResult<T> normalize(AttemptResult<T> r, Throwable e) {
    if (e != null) {
      Throwable cause = (e instanceof CompletionException || e instanceof ExecutionException)
          && e.getCause() != null ? e.getCause() : e;
      return AttemptResult.localOriginFailure(cause);
    }
    if (r == null) {
      return AttemptResult.localOriginFailure(
          new IllegalStateException("the attempt's future completed with null: complete it with an AttemptResult"));
    }
    return r;
  }
}
