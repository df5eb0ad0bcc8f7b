package dev.muster.grpc;

import dev.muster.registry.InstanceKey;
import dev.muster.retry.RetryBudget;
import dev.muster.retry.RetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.nio.channels.ClosedChannelException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/*
 * A unary call is replayable once its one message is known, so the call is held until halfClose() and then sent as
 * attempt 1 with the request, headers and options the caller gave. Each attempt carries an Attempt object in its
 * CallOptions: the muster picker writes the endpoint it picked into it and reads the endpoint to avoid from it. An
 * attempt that closes UNAVAILABLE without a response is retried — up to maxRetries, each retry withdrawn from the
 * budget (one deposit per call) — on another endpoint. So is one reset by the server (CANCELLED that the caller did
 * not ask for: grpc-java's status for RST_STREAM CANCEL, which a server sends to its streams on shutdownNow), and one
 * that ran out of its own attempt timeout while the call's deadline still had time (DEADLINE_EXCEEDED on an attempt
 * whose deadline was the attempt timeout, not the call's). Only the final attempt's headers, message and status reach
 * the caller's listener, so nothing is delivered twice.
 *
 * Threads: the caller's methods come from the caller's thread, the attempt listener's from the channel's call
 * executor (one attempt at a time, so the caller's listener sees one sequence). `lock` guards the hand-over between
 * them (current attempt, cancelled); no call is made under it.
 */
/**
 * Gives each attempt of an idempotent unary call its own timeout, and retries the calls that fail with
 * {@code UNAVAILABLE} (or are reset by the server: {@code CANCELLED} that the caller did not ask for; or hit a
 * connection the server closed: {@code UNKNOWN} caused by a {@code ClosedChannelException}; or ran out of the
 * attempt timeout: a frozen server that keeps its connection open) on a different endpoint, within Muster's
 * {@link RetryBudget}: the same rules as {@code MusterClient} (a retry only for idempotent calls, each on another
 * endpoint, at most {@link RetryConfig#maxRetries()}, and only while the budget — a share of the requests plus a
 * small floor — allows). A method qualifies when its {@link MethodDescriptor} is {@linkplain
 * MethodDescriptor#isIdempotent() idempotent} or {@linkplain MethodDescriptor#isSafe() safe}; streaming methods
 * and other methods pass through untouched. Install it on a channel that uses the {@code muster} policy (without it,
 * retries still happen but may land on the same endpoint):
 * {@code ClientInterceptors.intercept(channel, MusterRetryInterceptor.create(RetryConfig.defaults()))}.
 *
 * <p>gRPC's own retries ({@code retryPolicy} and {@code retryThrottling} in a service config) are a different engine:
 * they retry on the channel's picker without asking it for another endpoint and keep their own token bucket. Do not
 * combine the two (the attempts would multiply): leave {@code retryPolicy} out of your service config, or call
 * {@code ManagedChannelBuilder.disableRetry()}. The {@code muster:///} resolver's service config sets no retry
 * policy.
 *
 * <p>Deadlines: each attempt ends at its {@link RetryConfig#attemptTimeout()} (default 1 s, as in
 * {@code MusterClient}: set it above your slowest method's normal latency) or at the call's deadline (from
 * {@code CallOptions} or the caller's {@code Context}), whichever comes first. A call's deadline covers all its
 * attempts; an attempt that timed out on its own timeout is retried while the call's deadline has time left, one
 * that reached the call's deadline is not. A timed-out attempt also counts as a local-origin failure of its endpoint
 * for ejection. Headers and the response reach the listener when the call completes.
 *
 * <p>Thread-safe; one interceptor (and so one budget) may serve many channels of one service.
 */
public final class MusterRetryInterceptor implements ClientInterceptor {
  /** The picker reads the endpoint to avoid from this, and writes the one it picked. */
  static final CallOptions.Key<Attempt> ATTEMPT = CallOptions.Key.create("muster.attempt");

  private final RetryConfig config;
  private final RetryBudget budget;
  private final LongAdder retries = new LongAdder();

  private MusterRetryInterceptor(RetryConfig config, RetryBudget budget) {
    this.config = Objects.requireNonNull(config, "config");
    this.budget = Objects.requireNonNull(budget, "budget");
  }

  /** An interceptor with its own budget, built from {@code config}'s {@code budget*} values. */
  public static MusterRetryInterceptor create(RetryConfig config) {
    return new MusterRetryInterceptor(config, new RetryBudget(config, System::nanoTime));
  }

  /** An interceptor drawing on {@code budget}, e.g. one shared with a {@code MusterClient} of the same service. */
  public static MusterRetryInterceptor create(RetryConfig config, RetryBudget budget) {
    return new MusterRetryInterceptor(config, budget);
  }

  public RetryBudget budget() {
    return budget;
  }

  /** How many retries were sent. */
  public long retries() {
    return retries.sum();
  }

  @Override
  public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(MethodDescriptor<ReqT, RespT> method,
      CallOptions callOptions, Channel next) {
    if (method.getType() != MethodDescriptor.MethodType.UNARY || !(method.isIdempotent() || method.isSafe())
        || config.maxRetries() == 0) {
      return next.newCall(method, callOptions);
    }
    return new RetryingCall<>(method, callOptions, next);
  }

  /** One attempt's link to the picker. Thread-safe. */
  static final class Attempt {
    private final InstanceKey avoid;
    private final boolean ownDeadline;
    private volatile InstanceKey picked;

    Attempt(InstanceKey avoid, boolean ownDeadline) {
      this.avoid = avoid;
      this.ownDeadline = ownDeadline;
    }

    /** Whether this attempt's deadline is the attempt timeout (earlier than the call's). */
    boolean ownDeadline() {
      return ownDeadline;
    }

    /** The endpoint the previous attempt went to, or null for a first attempt. */
    InstanceKey avoid() {
      return avoid;
    }

    void picked(InstanceKey key) {
      picked = key;
    }

    /** The endpoint this attempt was sent to, or null if no muster picker saw it. */
    InstanceKey picked() {
      return picked;
    }
  }

  private final class RetryingCall<ReqT, RespT> extends ClientCall<ReqT, RespT> {
    private final MethodDescriptor<ReqT, RespT> method;
    private final CallOptions callOptions;
    private final Channel next;
    private final Context context = Context.current(); // the caller's: cancelling it cancels the call
    private final Object lock = new Object();

    // Set by the caller's methods before halfClose(), read by attempts after it.
    private Listener<RespT> listener;
    private Metadata headers;
    private ReqT message;
    private int requested;
    private int retried;

    // Guarded by lock.
    private ClientCall<ReqT, RespT> current;
    private boolean cancelled;

    RetryingCall(MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
      this.method = method;
      this.callOptions = callOptions;
      this.next = next;
    }

    @Override
    public void start(Listener<RespT> listener, Metadata headers) {
      if (this.listener != null) {
        throw new IllegalStateException("already started");
      }
      this.listener = Objects.requireNonNull(listener, "listener");
      this.headers = Objects.requireNonNull(headers, "headers");
      budget.deposit();
    }

    @Override
    public void request(int numMessages) {
      ClientCall<ReqT, RespT> c;
      synchronized (lock) {
        requested += numMessages;
        c = current;
      }
      if (c != null) {
        c.request(numMessages);
      }
    }

    @Override
    public void sendMessage(ReqT message) {
      if (this.message != null) {
        throw new IllegalStateException(method.getFullMethodName() + " is unary: one request message");
      }
      this.message = message;
    }

    @Override
    public void halfClose() {
      if (listener == null) {
        throw new IllegalStateException("not started");
      }
      launch(null);
    }

    @Override
    public void cancel(String why, Throwable cause) {
      ClientCall<ReqT, RespT> c;
      synchronized (lock) {
        if (cancelled) {
          return;
        }
        cancelled = true;
        c = current;
      }
      if (c != null) {
        c.cancel(why, cause); // its onClose(CANCELLED) reaches the listener, and is not retried
      } else if (listener != null) {
        listener.onClose(Status.CANCELLED.withDescription(why).withCause(cause), new Metadata());
      }
    }

    @Override
    public boolean isReady() {
      return true; // one message, held until halfClose
    }

    /** The earlier of the call's deadline and its context's, or null when neither has one. */
    private Deadline callDeadline() {
      Deadline options = callOptions.getDeadline();
      Deadline inherited = context.getDeadline();
      if (options == null || inherited == null) {
        return options != null ? options : inherited;
      }
      return options.minimum(inherited);
    }

    private void launch(InstanceKey avoid) {
      Deadline callDeadline = callDeadline();
      Deadline own = Deadline.after(config.attemptTimeout().toNanos(), TimeUnit.NANOSECONDS);
      boolean ownFirst = callDeadline == null || own.isBefore(callDeadline);
      Attempt attempt = new Attempt(avoid, ownFirst);
      ClientCall<ReqT, RespT> call = next.newCall(method,
          callOptions.withOption(ATTEMPT, attempt).withDeadline(ownFirst ? own : callDeadline));
      int toRequest;
      synchronized (lock) {
        if (cancelled) {
          return; // cancel() has told the listener, or the cancelled attempt's onClose has
        }
        current = call;
        toRequest = Math.max(requested, 1);
      }
      Metadata copy = new Metadata();
      copy.merge(headers);
      call.start(new AttemptListener(attempt), copy);
      call.request(toRequest);
      if (message != null) {
        call.sendMessage(message);
      }
      call.halfClose();
    }

    /** Holds one attempt's response until its status says whether it is the last attempt. */
    private final class AttemptListener extends Listener<RespT> {
      private final Attempt attempt;
      private Metadata responseHeaders;
      private RespT response;

      AttemptListener(Attempt attempt) {
        this.attempt = attempt;
      }

      @Override
      public void onHeaders(Metadata headers) {
        responseHeaders = headers;
      }

      @Override
      public void onMessage(RespT message) {
        response = message;
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        if (retryable(status) && budget.tryWithdraw()) {
          retried++;
          retries.increment();
          launch(attempt.picked() != null ? attempt.picked() : attempt.avoid());
          return;
        }
        if (responseHeaders != null) {
          listener.onHeaders(responseHeaders);
        }
        if (response != null) {
          listener.onMessage(response);
        }
        listener.onClose(status, trailers);
      }

      private boolean retryable(Status status) {
        boolean stillWanted;
        synchronized (lock) {
          stillWanted = !cancelled;
        }
        return stillWanted && response == null && retried < config.maxRetries() && (retryable(status.getCode())
            || connectionClosed(status) || attemptTimedOut(status));
      }

      /**
       * UNAVAILABLE (refused, reset, GOAWAY), or CANCELLED that neither the caller nor its context asked for: a
       * server shutting down resets its streams with RST_STREAM CANCEL, which grpc-java reports as CANCELLED.
       */
      private boolean retryable(Status.Code code) {
        return code == Status.Code.UNAVAILABLE || (code == Status.Code.CANCELLED && !context.isCancelled());
      }

      /**
       * A write to a connection the peer had just closed (a SIGKILLed server): grpc-java's Netty transport reports
       * it as UNKNOWN caused by a {@link ClosedChannelException}; judged by the cause's type.
       */
      private boolean connectionClosed(Status status) {
        return status.getCode() == Status.Code.UNKNOWN
            && status.getCause() instanceof ClosedChannelException;
      }

      /** DEADLINE_EXCEEDED from the attempt timeout, while the call's own deadline has time left. */
      private boolean attemptTimedOut(Status status) {
        if (status.getCode() != Status.Code.DEADLINE_EXCEEDED || !attempt.ownDeadline()) {
          return false;
        }
        Deadline callDeadline = callDeadline();
        return callDeadline == null || !callDeadline.isExpired();
      }
    }
  }
}
