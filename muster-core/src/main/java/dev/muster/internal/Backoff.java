package dev.muster.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Exponential backoff with full jitter: attempt {@code n} (0-based) waits a uniformly random time in
 * {@code [0, min(cap, base * 2^n)]}. Full jitter spreads many clients that failed together (a reconnect storm
 * after an etcd restart) over the whole window instead of synchronising them (AWS architecture blog, "Exponential
 * Backoff And Jitter"). The registrar and the endpoint cache both use it instead of grpc-java's own reconnect
 * backoff, which grows to 120 s.
 *
 * <p>Immutable and thread-safe as long as the injected {@link RandomGenerator} is.
 */
public record Backoff(Duration base, Duration cap, RandomGenerator random) {
  public Backoff {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(cap, "cap");
    Objects.requireNonNull(random, "random");
    if (base.isNegative() || base.isZero()) {
      throw new IllegalArgumentException("backoff base is " + base + ": use a positive duration");
    }
    if (cap.compareTo(base) < 0) {
      throw new IllegalArgumentException("backoff cap " + cap + " is below its base " + base);
    }
  }

  /** Base 100 ms, cap 5 s (SPEC §4). */
  public static Backoff defaults(RandomGenerator random) {
    return new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), random);
  }

  /** The upper bound of the window for attempt {@code attempt} (0-based): {@code min(cap, base * 2^attempt)}. */
  public Duration ceiling(int attempt) {
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt is " + attempt + ": use 0 or more");
    }
    int shift = Math.min(attempt, 30);
    long nanos = base.toNanos();
    long ceiling = nanos > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : nanos << shift;
    return Duration.ofNanos(Math.min(ceiling, cap.toNanos()));
  }

  /** A random wait in {@code [0, ceiling(attempt)]}. */
  public Duration delay(int attempt) {
    long ceiling = ceiling(attempt).toNanos();
    return Duration.ofNanos(ceiling == 0 ? 0 : random.nextLong(ceiling + 1));
  }
}
