package dev.muster.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.outlier.Outcome;
import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.DefaultRequest;
import org.springframework.cloud.client.loadbalancer.ResponseData;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;

/** What a completed call tells the ejection, in Envoy's terms. */
class MusterLoadBalancerLifecycleTest {
  private static CompletionContext<Object, ServiceInstance, Object> done(CompletionContext.Status status,
      Object response, Throwable error) {
    return new CompletionContext<>(status, error, new DefaultRequest<>(), null, response);
  }

  private static ResponseData answer(int code) {
    return new ResponseData(HttpStatusCode.valueOf(code), new HttpHeaders(), null, null);
  }

  @Test
  void anAnswerBelow500IsASuccessAnd5xxIsAServerFailure() {
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.SUCCESS, answer(200), null)))
        .isEqualTo(Outcome.SUCCESS);
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.SUCCESS, answer(404), null)))
        .isEqualTo(Outcome.SUCCESS);
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.SUCCESS, answer(503), null)))
        .isEqualTo(Outcome.HTTP_5XX);
  }

  @Test
  void aFailureWithoutAnAnswerIsLocalOriginAndADiscardedCallProvesNothing() {
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.FAILED, null,
        new IOException("Connection refused")))).isEqualTo(Outcome.LOCAL_ORIGIN_FAILURE);
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.FAILED, answer(502), null)))
        .isEqualTo(Outcome.HTTP_5XX);
    assertThat(MusterLoadBalancerLifecycle.outcome(done(CompletionContext.Status.DISCARD, null, null))).isNull();
  }
}
