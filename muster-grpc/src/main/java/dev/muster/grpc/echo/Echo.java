package dev.muster.grpc.echo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The demo service of {@code muster grpc-serve}, the tests and the lab: {@code muster.echo.Echo} with two methods,
 * defined by hand (JSON messages, no protoc) so the build needs no code generator.
 * <ul>
 *   <li>{@link #SAY}: unary, idempotent and safe. Request {@code {"text":"hi","delay_ms":0}}, reply
 *       {@code {"text":"hi","served_by":"p1"}} after the delay.
 *   <li>{@link #STREAM}: server-streaming. Request {@code {"count":10,"interval_ms":100}}, replies
 *       {@code {"seq":0,"served_by":"p1"}} ... one per interval.
 * </ul>
 *
 * <p>Thread-safe; the server side runs delays on one daemon scheduler per {@link #service(String)}.
 */
public final class Echo {
  public static final String SERVICE = "muster.echo.Echo";

  private static final ObjectMapper JSON = new ObjectMapper();

  /** JSON messages as Jackson trees. */
  public static final MethodDescriptor.Marshaller<JsonNode> MARSHALLER = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(JsonNode value) {
      try {
        return new ByteArrayInputStream(JSON.writeValueAsBytes(value));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    @Override
    public JsonNode parse(InputStream stream) {
      try {
        return JSON.readTree(stream);
      } catch (IOException e) {
        throw Status.INVALID_ARGUMENT.withDescription("not JSON: " + e.getMessage()).asRuntimeException();
      }
    }
  };

  /** Unary, idempotent and safe: a client may retry it on another endpoint. */
  public static final MethodDescriptor<JsonNode, JsonNode> SAY = MethodDescriptor.<JsonNode, JsonNode>newBuilder()
      .setType(MethodDescriptor.MethodType.UNARY)
      .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Say"))
      .setRequestMarshaller(MARSHALLER).setResponseMarshaller(MARSHALLER)
      .setIdempotent(true).setSafe(true)
      .build();

  /** Server-streaming; not idempotent (a retry would repeat what the client already saw). */
  public static final MethodDescriptor<JsonNode, JsonNode> STREAM = MethodDescriptor.<JsonNode, JsonNode>newBuilder()
      .setType(MethodDescriptor.MethodType.SERVER_STREAMING)
      .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "Stream"))
      .setRequestMarshaller(MARSHALLER).setResponseMarshaller(MARSHALLER)
      .build();

  private Echo() {}

  /** A {@link #SAY} request. */
  public static JsonNode say(String text, long delayMs) {
    ObjectNode n = JSON.createObjectNode();
    n.put("text", text);
    n.put("delay_ms", delayMs);
    return n;
  }

  /** A {@link #STREAM} request. */
  public static JsonNode stream(int count, long intervalMs) {
    ObjectNode n = JSON.createObjectNode();
    n.put("count", count);
    n.put("interval_ms", intervalMs);
    return n;
  }

  /** The service, answering as {@code servedBy} (an instance id) in every reply. */
  public static ServerServiceDefinition service(String servedBy) {
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "muster-echo-" + servedBy);
      t.setDaemon(true);
      return t;
    });
    return ServerServiceDefinition.builder(SERVICE)
        .addMethod(SAY, ServerCalls.asyncUnaryCall((request, reply) -> {
          ObjectNode out = JSON.createObjectNode();
          out.put("text", request.path("text").asText(""));
          out.put("served_by", servedBy);
          long delay = Math.max(0, request.path("delay_ms").asLong(0));
          timer.schedule(() -> {
            reply.onNext(out);
            reply.onCompleted();
          }, delay, TimeUnit.MILLISECONDS);
        }))
        .addMethod(STREAM, ServerCalls.asyncServerStreamingCall((request, replies) ->
            streamTo((ServerCallStreamObserver<JsonNode>) replies, servedBy, request.path("count").asInt(1),
                Math.max(0, request.path("interval_ms").asLong(100)), 0, timer)))
        .build();
  }

  private static void streamTo(ServerCallStreamObserver<JsonNode> replies, String servedBy, int count,
      long intervalMs, int seq, ScheduledExecutorService timer) {
    if (replies.isCancelled()) {
      return;
    }
    if (seq >= count) {
      replies.onCompleted();
      return;
    }
    ObjectNode out = JSON.createObjectNode();
    out.put("seq", seq);
    out.put("served_by", servedBy);
    replies.onNext(out);
    timer.schedule(() -> streamTo(replies, servedBy, count, intervalMs, seq + 1, timer), intervalMs,
        TimeUnit.MILLISECONDS);
  }
}
