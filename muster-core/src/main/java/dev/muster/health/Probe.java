package dev.muster.health;

import dev.muster.registry.Instance;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * Checks one endpoint once. {@link Prober} calls {@link #check} for each endpoint of its set, one probe at a time
 * per endpoint, and judges the results against the thresholds.
 *
 * <p>Implementations must be thread-safe and must not block in {@link #check}: return a future that completes when
 * the answer comes (on any thread). A probe that throws or completes exceptionally counts as a failure; one that
 * does not complete within the timeout is failed by the prober.
 */
public interface Probe extends AutoCloseable {
  /** Checks {@code target} once, giving up after {@code timeout}. */
  CompletableFuture<ProbeResult> check(Instance target, Duration timeout);

  /** {@code target} left the set: drop what is kept for it (a connection). Default nothing. */
  default void forget(Instance target) {}

  /** Releases the probe's resources (its client, its threads). Default nothing. */
  @Override
  default void close() {}

  /**
   * The built-in probe for {@code config}'s kind, HTTP or TCP, completing on {@code executor} (the prober's pool).
   * GRPC needs {@code dev.muster.grpc.GrpcHealthProbe} from {@code muster-grpc}: asking for it here is an
   * {@link IllegalArgumentException} that says so.
   */
  static Probe of(ProbeConfig config, Executor executor) {
    return switch (config.kind()) {
      case HTTP -> new HttpProbe(config, executor);
      case TCP -> new TcpProbe();
      case GRPC -> throw new IllegalArgumentException("a grpc.health.v1 probe needs muster-grpc:"
          + " pass dev.muster.grpc.GrpcHealthProbe to the client's builder");
    };
  }
}
