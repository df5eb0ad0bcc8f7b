package dev.muster.outlier;

import dev.muster.InvalidInputException;
import java.time.Duration;

/**
 * Passive (local) ejection settings, named after Envoy's outlier detection (SPEC §5). Immutable; start from
 * {@link #defaults()} or {@link #builder()}.
 *
 * @param enabled false turns ejection off: outcomes are ignored and nothing is ever ejected (default true)
 * @param consecutiveLocalOriginFailure eject after this many local-origin failures in a row (refused, reset,
 *     attempt timeout) (default 1)
 * @param consecutive5xx eject after this many 5xx responses in a row (default 5)
 * @param baseEjectionTime the n-th ejection in a row lasts {@code baseEjectionTime × n} ... (default 30 s)
 * @param maxEjectionTime ... but never longer than this (default 300 s); at least {@code baseEjectionTime}
 * @param maxEjectionPercent at most this share of a service's endpoints is ejected at once, except that one
 *     endpoint may always be ejected (Envoy's rule) (default 50)
 */
public record OutlierConfig(
    boolean enabled,
    int consecutiveLocalOriginFailure,
    int consecutive5xx,
    Duration baseEjectionTime,
    Duration maxEjectionTime,
    int maxEjectionPercent) {

  public OutlierConfig {
    if (consecutiveLocalOriginFailure < 1) {
      throw new InvalidInputException("consecutiveLocalOriginFailure", consecutiveLocalOriginFailure,
          "use 1 or more failures");
    }
    if (consecutive5xx < 1) {
      throw new InvalidInputException("consecutive5xx", consecutive5xx, "use 1 or more responses");
    }
    positive("baseEjectionTime", baseEjectionTime);
    positive("maxEjectionTime", maxEjectionTime);
    if (maxEjectionTime.compareTo(baseEjectionTime) < 0) {
      throw new InvalidInputException("maxEjectionTime", maxEjectionTime,
          "use at least baseEjectionTime (" + baseEjectionTime + ")");
    }
    if (maxEjectionPercent < 0 || maxEjectionPercent > 100) {
      throw new InvalidInputException("maxEjectionPercent", maxEjectionPercent, "use 0 to 100");
    }
  }

  /** 1 local-origin failure or 5 consecutive 5xx; 30 s base, 300 s cap, at most 50 % ejected. */
  public static OutlierConfig defaults() {
    return builder().build();
  }

  /** A builder holding the {@linkplain #defaults() defaults}. */
  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .enabled(enabled)
        .consecutiveLocalOriginFailure(consecutiveLocalOriginFailure)
        .consecutive5xx(consecutive5xx)
        .baseEjectionTime(baseEjectionTime)
        .maxEjectionTime(maxEjectionTime)
        .maxEjectionPercent(maxEjectionPercent);
  }

  private static void positive(String field, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new InvalidInputException(field, d, "use a positive duration");
    }
  }

  /** Builds an {@link OutlierConfig}; every value is checked in {@link #build()}. */
  public static final class Builder {
    private boolean enabled = true;
    private int consecutiveLocalOriginFailure = 1;
    private int consecutive5xx = 5;
    private Duration baseEjectionTime = Duration.ofSeconds(30);
    private Duration maxEjectionTime = Duration.ofSeconds(300);
    private int maxEjectionPercent = 50;

    private Builder() {}

    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    public Builder consecutiveLocalOriginFailure(int failures) {
      this.consecutiveLocalOriginFailure = failures;
      return this;
    }

    public Builder consecutive5xx(int responses) {
      this.consecutive5xx = responses;
      return this;
    }

    public Builder baseEjectionTime(Duration d) {
      this.baseEjectionTime = d;
      return this;
    }

    public Builder maxEjectionTime(Duration d) {
      this.maxEjectionTime = d;
      return this;
    }

    public Builder maxEjectionPercent(int percent) {
      this.maxEjectionPercent = percent;
      return this;
    }

    public OutlierConfig build() {
      return new OutlierConfig(enabled, consecutiveLocalOriginFailure, consecutive5xx, baseEjectionTime,
          maxEjectionTime, maxEjectionPercent);
    }
  }
}
