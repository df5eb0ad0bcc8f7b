package dev.muster.grpc;

import dev.muster.balance.EndpointState;
import dev.muster.outlier.Outcome;
import dev.muster.outlier.OutlierDetector;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Status;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reports each stream on a picked subchannel to Muster's engine, as {@code Caller} does for its attempts: the
 * endpoint's in-flight count and latency (for power of two choices) and the outcome (for ejection).
 *
 * <p>Thread-safe: one factory per endpoint per picker, shared by every stream picked for that endpoint; each
 * tracer reports once, from whichever transport thread closes its stream.
 */
final class OutcomeTracer extends ClientStreamTracer.Factory {
  private final EndpointState endpoint;
  private final OutlierDetector detector;

  OutcomeTracer(EndpointState endpoint, OutlierDetector detector) {
    this.endpoint = endpoint;
    this.detector = detector;
  }

  /**
   * What a status proves about the endpoint, in Envoy's terms. UNAVAILABLE (refused, reset, GOAWAY) and
   * DEADLINE_EXCEEDED (the attempt timed out, as Muster's own attempt deadline counts) are local-origin failures;
   * INTERNAL, UNKNOWN and DATA_LOSS are the server failing, like a 5xx; CANCELLED is the caller's doing and proves
   * nothing (null: not reported); every other status is an answer from a working endpoint.
   */
  static Outcome outcome(Status.Code code) {
    return switch (code) {
      case UNAVAILABLE, DEADLINE_EXCEEDED -> Outcome.LOCAL_ORIGIN_FAILURE;
      case INTERNAL, UNKNOWN, DATA_LOSS -> Outcome.HTTP_5XX;
      case CANCELLED -> null;
      default -> Outcome.SUCCESS;
    };
  }

  @Override
  public ClientStreamTracer newClientStreamTracer(ClientStreamTracer.StreamInfo info, Metadata headers) {
    endpoint.started();
    long startNanos = System.nanoTime();
    AtomicBoolean closed = new AtomicBoolean();
    return new ClientStreamTracer() {
      @Override
      public void streamClosed(Status status) {
        if (closed.compareAndSet(false, true)) {
          endpoint.finished(Duration.ofNanos(System.nanoTime() - startNanos));
          Outcome outcome = outcome(status.getCode());
          if (outcome != null) {
            detector.record(endpoint.outlier(), outcome);
          }
        }
      }
    };
  }
}
