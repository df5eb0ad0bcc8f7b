package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.InstanceKey;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The retry interceptor against a scripted channel: which failures are retried, where, and within what budget. */
class MusterRetryInterceptorTest {
  private final AtomicLong nanos = new AtomicLong();
  private final ScriptedChannel channel = new ScriptedChannel();

  private MusterRetryInterceptor interceptor(RetryConfig config) {
    return MusterRetryInterceptor.create(config, new RetryBudget(config, nanos::get));
  }

  private Recorder call(MusterRetryInterceptor retry, MethodDescriptor<JsonNode, JsonNode> method) {
    return call(retry, method, CallOptions.DEFAULT);
  }

  private Recorder call(MusterRetryInterceptor retry, MethodDescriptor<JsonNode, JsonNode> method,
      CallOptions options) {
    Recorder r = new Recorder();
    ClientCall<JsonNode, JsonNode> call = retry.interceptCall(method, options, channel);
    call.start(r, new Metadata());
    call.request(2);
    call.sendMessage(Echo.say("hi", 0));
    call.halfClose();
    return r;
  }

  @Test
  void anUnavailableIdempotentCallIsRetriedOnceAvoidingTheEndpointOfTheFailedAttempt() {
    channel.script(Status.UNAVAILABLE, "a").script(Status.OK, "b");
    MusterRetryInterceptor retry = interceptor(RetryConfig.defaults());
    Recorder r = call(retry, Echo.SAY);
    assertThat(r.status.getCode()).isEqualTo(Status.Code.OK);
    assertThat(r.messages).hasSize(1); // only the final attempt's response
    assertThat(channel.avoided).containsExactly(null, key("a"));
    assertThat(retry.retries()).isEqualTo(1);
  }

  @Test
  void aWriteToAConnectionTheKilledServerClosedIsRetriedButOtherUnknownFailuresAreNot() {
    channel.script(Status.UNKNOWN.withDescription("channel closed")
        .withCause(new java.nio.channels.ClosedChannelException()), "a").script(Status.OK, "b");
    assertThat(call(interceptor(RetryConfig.defaults()), Echo.SAY).status.isOk()).isTrue();

    channel.script(Status.UNKNOWN.withDescription("channel closed"), "a").script(Status.OK, "b");
    MusterRetryInterceptor retry = interceptor(RetryConfig.defaults());
    assertThat(call(retry, Echo.SAY).status.getCode()).isEqualTo(Status.Code.UNKNOWN);
    assertThat(retry.retries()).isZero();
  }

  @Test
  void aServerResetIsRetriedButACancelByTheCallersContextIsNot() {
    channel.script(Status.CANCELLED.withDescription("RST_STREAM closed stream"), "a").script(Status.OK, "b");
    assertThat(call(interceptor(RetryConfig.defaults()), Echo.SAY).status.isOk()).isTrue();

    Context.CancellableContext context = Context.current().withCancellation();
    context.cancel(null);
    channel.script(Status.CANCELLED, "a").script(Status.OK, "b");
    MusterRetryInterceptor retry = interceptor(RetryConfig.defaults());
    Recorder r;
    Context previous = context.attach();
    try {
      r = call(retry, Echo.SAY);
    } finally {
      context.detach(previous);
    }
    assertThat(r.status.getCode()).isEqualTo(Status.Code.CANCELLED);
    assertThat(retry.retries()).isZero();
  }

  @Test
  void eachAttemptEndsAtTheAttemptTimeoutAndOneThatRanOutOfItIsRetriedWhileTheCallHasTime() {
    RetryConfig config = RetryConfig.builder().attemptTimeout(Duration.ofMillis(300)).build();
    channel.script(Status.DEADLINE_EXCEEDED, "a").script(Status.OK, "b");
    MusterRetryInterceptor retry = interceptor(config);
    Recorder r = call(retry, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
    assertThat(r.status.getCode()).isEqualTo(Status.Code.OK);
    assertThat(channel.avoided).containsExactly(null, key("a"));
    assertThat(channel.deadlines).hasSize(2).allSatisfy(d ->
        assertThat(d.timeRemaining(TimeUnit.MILLISECONDS)).isBetween(1L, 300L));

    // No call deadline at all: the attempt timeout still applies.
    channel.reset().script(Status.DEADLINE_EXCEEDED, "a").script(Status.OK, "b");
    assertThat(call(retry, Echo.SAY).status.isOk()).isTrue();
    assertThat(channel.deadlines).hasSize(2).doesNotContainNull();
  }

  @Test
  void anAttemptThatReachedTheCallsOwnDeadlineIsNotRetried() {
    RetryConfig config = RetryConfig.builder().attemptTimeout(Duration.ofSeconds(5)).build();
    channel.script(Status.DEADLINE_EXCEEDED, "a").script(Status.OK, "b");
    MusterRetryInterceptor retry = interceptor(config);
    Recorder r = call(retry, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(200, TimeUnit.MILLISECONDS));
    assertThat(r.status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    assertThat(retry.retries()).isZero();
    assertThat(channel.deadlines.get(0).timeRemaining(TimeUnit.MILLISECONDS)).isLessThanOrEqualTo(200L);

    // The context's deadline counts as the call's too.
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    Context.CancellableContext context = Context.current().withDeadlineAfter(200, TimeUnit.MILLISECONDS, scheduler);
    channel.reset().script(Status.DEADLINE_EXCEEDED, "a").script(Status.OK, "b");
    Context previous = context.attach();
    try {
      assertThat(call(retry, Echo.SAY).status.getCode()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    } finally {
      context.detach(previous);
      context.cancel(null);
      scheduler.shutdownNow();
    }
  }

  @Test
  void atMostMaxRetriesAreMadeAndTheLastFailureIsWhatTheCallerSees() {
    channel.script(Status.UNAVAILABLE, "a").script(Status.UNAVAILABLE, "b").script(Status.UNAVAILABLE, "c")
        .script(Status.OK, "d");
    Recorder r = call(interceptor(RetryConfig.builder().maxRetries(2).build()), Echo.SAY);
    assertThat(r.status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(channel.avoided).hasSize(3);
  }

  @Test
  void otherFailuresAndNonIdempotentOrStreamingMethodsAreNotRetried() {
    MusterRetryInterceptor retry = interceptor(RetryConfig.defaults());
    channel.script(Status.INTERNAL, "a").script(Status.OK, "b");
    assertThat(call(retry, Echo.SAY).status.getCode()).isEqualTo(Status.Code.INTERNAL);

    MethodDescriptor<JsonNode, JsonNode> plain = Echo.SAY.toBuilder().setIdempotent(false).setSafe(false).build();
    channel.reset().script(Status.UNAVAILABLE, "a").script(Status.OK, "b");
    assertThat(call(retry, plain).status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(retry.interceptCall(Echo.STREAM, CallOptions.DEFAULT, channel)).isInstanceOf(ScriptedCall.class);
    assertThat(retry.retries()).isZero();
  }

  @Test
  void anEmptyBudgetRefusesTheRetry() {
    RetryConfig config = RetryConfig.builder().budget(Duration.ofSeconds(10), 0.0, 0).build();
    MusterRetryInterceptor retry = interceptor(config);
    channel.script(Status.UNAVAILABLE, "a").script(Status.OK, "b");
    assertThat(call(retry, Echo.SAY).status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(retry.budget().refused()).isEqualTo(1);
  }

  private static InstanceKey key(String id) {
    return new InstanceKey("default", "echo", "v1", id);
  }

  /** The caller's listener: what it was told. */
  private static final class Recorder extends ClientCall.Listener<JsonNode> {
    final List<JsonNode> messages = new ArrayList<>();
    Status status;

    @Override
    public void onMessage(JsonNode message) {
      messages.add(message);
    }

    @Override
    public void onClose(Status status, Metadata trailers) {
      assertThat(this.status).as("closed once").isNull();
      this.status = status;
    }
  }

  /** Each new call takes the next scripted (status, endpoint) and answers it at halfClose, as a picker would. */
  private static final class ScriptedChannel extends Channel {
    final Deque<Object[]> script = new ArrayDeque<>();
    final List<InstanceKey> avoided = new ArrayList<>();
    final List<Deadline> deadlines = new ArrayList<>();

    ScriptedChannel script(Status status, String endpoint) {
      script.add(new Object[] {status, endpoint});
      return this;
    }

    ScriptedChannel reset() {
      script.clear();
      avoided.clear();
      deadlines.clear();
      return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <ReqT, RespT> ClientCall<ReqT, RespT> newCall(MethodDescriptor<ReqT, RespT> method, CallOptions options) {
      if (options.getOption(MusterRetryInterceptor.ATTEMPT) != null) {
        deadlines.add(options.getDeadline());
      }
      return (ClientCall<ReqT, RespT>) new ScriptedCall(this, options.getOption(MusterRetryInterceptor.ATTEMPT));
    }

    @Override
    public String authority() {
      return "echo";
    }
  }

  private static final class ScriptedCall extends ClientCall<JsonNode, JsonNode> {
    private final ScriptedChannel channel;
    private final MusterRetryInterceptor.Attempt attempt;
    private Listener<JsonNode> listener;

    ScriptedCall(ScriptedChannel channel, MusterRetryInterceptor.Attempt attempt) {
      this.channel = channel;
      this.attempt = attempt;
    }

    @Override
    public void start(Listener<JsonNode> listener, Metadata headers) {
      this.listener = listener;
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {}

    @Override
    public void halfClose() {
      Object[] next = channel.script.remove();
      Status status = (Status) next[0];
      if (attempt != null) {
        channel.avoided.add(attempt.avoid());
        attempt.picked(key((String) next[1]));
      }
      listener.onHeaders(new Metadata());
      if (status.isOk()) {
        listener.onMessage(Echo.say("reply", 0));
      }
      listener.onClose(status, new Metadata());
    }

    @Override
    public void sendMessage(JsonNode message) {}
  }
}
