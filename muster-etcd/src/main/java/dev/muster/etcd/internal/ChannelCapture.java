package dev.muster.etcd.internal;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.util.concurrent.CompletableFuture;

/**
 * Given to jetcd's client builder: keeps the channel of the first call that jetcd makes through the client. The
 * interceptor sees the channel beneath it, the one jetcd's stubs call on; a stub built on it shares the client's
 * connection (no second TCP connection, the same TLS).
 */
final class ChannelCapture implements ClientInterceptor {
  private final CompletableFuture<Channel> channel = new CompletableFuture<>();

  /** Completes with the channel when jetcd first calls through the client. */
  CompletableFuture<Channel> channel() {
    return channel;
  }

  @Override
  public <Q, A> ClientCall<Q, A> interceptCall(MethodDescriptor<Q, A> method, CallOptions options, Channel next) {
    if (!channel.isDone()) {
      channel.complete(next);
    }
    return next.newCall(method, options);
  }
}
