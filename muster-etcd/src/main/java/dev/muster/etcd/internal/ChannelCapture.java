package dev.muster.etcd.internal;

import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateResponse;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.concurrent.CompletableFuture;

/**
 * Given to jetcd's client builder: keeps the channel of the first call that jetcd makes through the client, and the
 * token of jetcd's last {@code Auth/Authenticate} answer. The interceptor sees the channel beneath it, the one jetcd's
 * stubs call on; a stub built on it shares the client's connection (no second TCP connection, the same TLS).
 *
 * <p>{@link KeepAliveStream} and {@link WatchStream} open their calls on it. Why jetcd's token: the keepalive stream
 * sends it instead of fetching its own, so the client has one token (the watch stream does the same). etcd 3.5.28+ checks the token of every keepalive, and a simple token's life
 * is extended each time it is checked, so the keepalives keep jetcd's token alive as jetcd's own keepalives did.
 * With a token of the stream's own, jetcd's would expire on a provider that only keeps its lease alive, and its
 * next calls (an update, every registration's revoke at shutdown) would each authenticate again, at once.
 *
 * <p>Thread-safe: gRPC calls it on any thread; both values are written once per event and read lock-free.
 */
final class ChannelCapture implements ClientInterceptor {
  private final CompletableFuture<Channel> channel = new CompletableFuture<>();
  private volatile String token;

  /** Completes with the channel when jetcd first calls through the client. */
  CompletableFuture<Channel> channel() {
    return channel;
  }

  /**
   * The channel, once a call of jetcd's has passed the interceptor: waits, until {@code deadline} ({@link
   * System#nanoTime()}), for it or for {@code read} (a call started to make jetcd call, or null), whichever ends
   * first. A read that failed before it called on the channel says why. Shared by the keepalive and watch streams.
   */
  Channel channel(CompletableFuture<?> read, long deadline)
      throws java.util.concurrent.ExecutionException, java.util.concurrent.TimeoutException, InterruptedException {
    if (read != null) {
      try {
        CompletableFuture.anyOf(channel, read).get(Math.max(0, deadline - System.nanoTime()),
            java.util.concurrent.TimeUnit.NANOSECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        if (!channel.isDone()) { // the read failed before it called on the channel: it says why
          throw e;
        }
      }
    }
    return channel.get();
  }

  /** The token etcd last gave jetcd on this channel, or null before the first. */
  String token() {
    return token;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    if (!channel.isDone()) {
      channel.complete(next);
    }
    ClientCall<Q, A> call = next.newCall(method, options);
    if (!method.getFullMethodName().equals(AuthGrpc.getAuthenticateMethod().getFullMethodName())) {
      return call;
    }
    return new SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<A> listener, Metadata headers) {
        super.start(new SimpleForwardingClientCallListener<>(listener) {
          @Override
          public void onMessage(A message) {
            if (message instanceof AuthenticateResponse answer && !answer.getToken().isEmpty()) {
              token = answer.getToken();
            }
            super.onMessage(message);
          }
        }, headers);
      }
    };
  }
}
