package dev.muster.spring;

import dev.muster.retry.RetryBudget;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerClientRequestTransformer;
import org.springframework.cloud.client.loadbalancer.reactive.LoadBalancerRetryPolicy;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableLoadBalancerExchangeFilterFunction;
import org.springframework.cloud.client.loadbalancer.reactive.RetryableStatusCodeException;
import org.springframework.http.HttpStatus;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/*
 * Where the budget sits. Spring Cloud's reactive retries are Reactor retries around "choose an instance, send":
 * an answer with a retryable status is turned into an error only if the LoadBalancerRetryPolicy's canRetry*()
 * agrees, but a failure without an answer (refused, reset, timed out: the only retries by default, as
 * retryable-status-codes is empty) is retried by Reactor's RetrySpec, which asks the policy nothing but
 * retryableException(error), and asks it before checking its own count. A policy can therefore neither see every
 * retry nor tell whether one will follow. What every attempt does, first or retry, is call choose() (the retry
 * re-subscribes to it) before anything is sent: the one place where a retry is certain, for any kind of failure.
 * So: the first choice of a request passes (its deposit is made by MusterLoadBalancerLifecycle when it starts), each
 * later choice withdraws one retry, and a refused withdrawal ends the request with its last attempt's outcome,
 * the answer or the error, as if the retry had not been wanted; the policy is Spring Cloud's, untouched.
 */
/**
 * Spring Cloud's reactive retries ({@code @LoadBalanced} {@code WebClient} with
 * {@code spring.cloud.loadbalancer.retry.enabled=true}) within Muster's retry budget, as {@link MusterRetryFactory}
 * bounds the blocking ones: Spring Cloud's policy still decides which failures a retry is wanted for
 * ({@code spring.cloud.loadbalancer.retry.*}), then the service's {@link RetryBudget} decides whether it is made.
 * A refused retry is counted in the budget's {@link RetryBudget#refused()} ({@code muster.retry.budget.refused}),
 * and the request ends with what its last attempt got: the answer (say a 503) or the error.
 *
 * <p>Thread-safe. A request's attempts run one after another; what they share (how many choices were made, the
 * last attempt's outcome) is one object per subscription, carried in the Reactor context.
 */
public final class MusterRetryableExchangeFilterFunction extends RetryableLoadBalancerExchangeFilterFunction {
  private final MusterClients clients;

  public MusterRetryableExchangeFilterFunction(LoadBalancerRetryPolicy.Factory policies,
      ReactiveLoadBalancer.Factory<ServiceInstance> balancers, List<LoadBalancerClientRequestTransformer> transformers,
      MusterClients clients) {
    super(policies, balancers, transformers);
    this.clients = clients;
  }

  @Override
  public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
    return Mono.defer(() -> {
      Attempts attempts = new Attempts(request.url().getHost());
      return super.filter(request, attempts.recording(next))
          .onErrorResume(e -> RetryRefused.endedIt(e) || exhaustedOnAStatus(e), e -> attempts.last())
          .contextWrite(Context.of(Attempts.class, attempts));
    });
  }

  @Override
  protected Mono<Response<ServiceInstance>> choose(String serviceId, Request<RetryableRequestContext> request) {
    return Mono.deferContextual(context -> {
      Attempts attempts = context.getOrDefault(Attempts.class, null);
      if (attempts == null || attempts.firstChoice()) {
        return super.choose(serviceId, request);
      }
      if (!attempts.refused && clients.client(serviceId).budget().tryWithdraw()) {
        attempts.discardLast();
        return super.choose(serviceId, request);
      }
      attempts.refused = true; // one refusal per request: a policy that retries any error must not ask again
      return Mono.error(new RetryRefused(serviceId));
    });
  }

  /**
   * Whether Reactor ran out of retries on a retry Spring Cloud wanted for a status: Spring Cloud counts retries for
   * a status in its own context and retries for an error only in Reactor's, so after "no answer, then a 503" it
   * asks for one more than Reactor has, and its internal {@link RetryableStatusCodeException} would reach the caller
   * instead of the 503 (MusterWebClientRetryIT). The request ends with its last attempt's answer instead.
   */
  private static boolean exhaustedOnAStatus(Throwable error) {
    Throwable t = error;
    while (Exceptions.isRetryExhausted(t) && t.getCause() != null) { // one wrapper per retryWhen: same, then next
      t = t.getCause();
    }
    return t != error && t instanceof RetryableStatusCodeException;
  }

  /** What one request's attempts share. Written by one attempt at a time; volatile for the thread hops between. */
  private static final class Attempts {
    private final String service;
    private final AtomicInteger choices = new AtomicInteger();
    private volatile boolean refused;
    private volatile ClientResponse lastAnswer;
    private volatile Throwable lastError;

    Attempts(String service) {
      this.service = service;
    }

    ExchangeFunction recording(ExchangeFunction next) {
      return request -> next.exchange(request).doOnNext(answer -> {
        lastError = null;
        lastAnswer = answer;
      }).doOnError(error -> {
        lastAnswer = null;
        lastError = error;
      });
    }

    boolean firstChoice() {
      return choices.getAndIncrement() == 0;
    }

    /** A retry goes ahead: the last answer will reach no one (Spring Cloud drops it), so its body is released. */
    void discardLast() {
      ClientResponse answer = lastAnswer;
      lastAnswer = null;
      lastError = null;
      if (answer != null) {
        answer.releaseBody().onErrorComplete().subscribe();
      }
    }

    /** The last attempt's outcome; none recorded means it found no instance, which Spring Cloud answers 503. */
    Mono<ClientResponse> last() {
      ClientResponse answer = lastAnswer;
      Throwable error = lastError;
      if (answer != null) {
        return Mono.just(answer);
      }
      if (error != null) {
        return Mono.error(error);
      }
      return Mono.just(ClientResponse.create(HttpStatus.SERVICE_UNAVAILABLE)
          .body("No instances available for " + service).build());
    }
  }

  /** Signals, inside the filter only, that the budget refused a retry; never reaches the caller. */
  private static final class RetryRefused extends RuntimeException {
    RetryRefused(String service) {
      super("the retry budget of " + service + " refused a retry", null, false, false);
    }

    static boolean endedIt(Throwable error) {
      for (Throwable t = error; t != null; t = t.getCause()) {
        if (t instanceof RetryRefused) {
          return true;
        }
      }
      return false;
    }
  }
}
