package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.grpc.MusterRetryInterceptor;
import dev.muster.grpc.echo.Echo;
import dev.muster.retry.RetryConfig;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code grpc-call}'s count of a call's attempts ({@link GrpcCallCommand.AttemptCount}), through the retry
 * interceptor it installs and a real gRPC server on loopback whose Say fails the first {@code failFirst} calls
 * UNAVAILABLE.
 */
class GrpcCallAttemptsTest {
  private final AtomicInteger failFirst = new AtomicInteger();
  private Server server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    ServerServiceDefinition echo = ServerServiceDefinition.builder(Echo.SERVICE)
        .addMethod(Echo.SAY, ServerCalls.asyncUnaryCall((JsonNode request, io.grpc.stub.StreamObserver<JsonNode> reply) -> {
          if (failFirst.getAndDecrement() > 0) {
            reply.onError(Status.UNAVAILABLE.withDescription("failing on purpose").asRuntimeException());
          } else {
            reply.onNext(request);
            reply.onCompleted();
          }
        }))
        .addMethod(Echo.STREAM, ServerCalls.asyncServerStreamingCall((request, reply) -> reply.onCompleted()))
        .build();
    server = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(echo).build().start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws InterruptedException {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private int attemptsOfOneCall(int maxRetries) {
    Channel calls = ClientInterceptors.intercept(channel, MusterRetryInterceptor.create(RetryConfig.defaults()
        .toBuilder().maxRetries(maxRetries).attemptTimeout(Duration.ofSeconds(5)).build()));
    GrpcCallCommand.AttemptCount attempts = new GrpcCallCommand.AttemptCount();
    try {
      ClientCalls.blockingUnaryCall(calls, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS)
          .withStreamTracerFactory(attempts), Echo.say("hi", 0));
    } catch (io.grpc.StatusRuntimeException e) {
      assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    }
    return attempts.attempts();
  }

  @Test
  void aCallAnsweredAtOnceMadeOneAttempt() {
    assertThat(attemptsOfOneCall(1)).isEqualTo(1);
  }

  @Test
  void aCallRetriedOnceMadeTwoAttempts() {
    failFirst.set(1);
    assertThat(attemptsOfOneCall(1)).isEqualTo(2);
  }

  @Test
  void aCallThatRanOutOfRetriesCountsEveryAttempt() {
    failFirst.set(5);
    assertThat(attemptsOfOneCall(2)).isEqualTo(3);
  }
}
