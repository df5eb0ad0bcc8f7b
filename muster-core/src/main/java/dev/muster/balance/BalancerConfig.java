package dev.muster.balance;

import dev.muster.InvalidInputException;
import dev.muster.registry.Names;
import java.time.Duration;

/**
 * How a {@link Balancer} chooses among a service's endpoints (SPEC §5). Immutable; start from {@link #defaults()} or
 * {@link #builder()}.
 *
 * @param policy how to choose among the candidates (default {@link Policy#POWER_OF_TWO})
 * @param localZone this consumer's zone, or null for no zone preference (default null)
 * @param minLocalShare while at least this share (0 to 1) of the local zone's endpoints is available — neither
 *     ejected nor {@code DRAINING} — only local-zone endpoints are picked; below it, every available endpoint is
 *     (default 0.5)
 * @param ewmaDecay the time constant of each endpoint's latency EWMA: a sample's weight falls to 1/e after this
 *     long (default 10 s)
 */
public record BalancerConfig(Policy policy, String localZone, double minLocalShare, Duration ewmaDecay) {

  /** How one endpoint is chosen among the candidates. */
  public enum Policy {
    /** Each candidate in turn, in key order. */
    ROUND_ROBIN,
    /** At random, in proportion to {@code Instance.weight()}. */
    WEIGHTED_RANDOM,
    /** Two distinct candidates at random; the one with the lower load score (see {@link EndpointState#score()}). */
    POWER_OF_TWO
  }

  public BalancerConfig {
    if (policy == null) {
      throw new InvalidInputException("policy", null, "use ROUND_ROBIN, WEIGHTED_RANDOM or POWER_OF_TWO");
    }
    if (localZone != null) {
      Names.requireValid("localZone", localZone);
    }
    if (!(minLocalShare >= 0.0 && minLocalShare <= 1.0)) {
      throw new InvalidInputException("minLocalShare", minLocalShare, "use a share from 0.0 to 1.0");
    }
    if (ewmaDecay == null || ewmaDecay.isNegative() || ewmaDecay.isZero()) {
      throw new InvalidInputException("ewmaDecay", ewmaDecay, "use a positive duration");
    }
  }

  /** Power of two choices, no zone preference, share 0.5, EWMA decay 10 s. */
  public static BalancerConfig defaults() {
    return builder().build();
  }

  /** A builder holding the {@linkplain #defaults() defaults}. */
  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().policy(policy).localZone(localZone).minLocalShare(minLocalShare).ewmaDecay(ewmaDecay);
  }

  /** Builds a {@link BalancerConfig}; every value is checked in {@link #build()}. */
  public static final class Builder {
    private Policy policy = Policy.POWER_OF_TWO;
    private String localZone;
    private double minLocalShare = 0.5;
    private Duration ewmaDecay = Duration.ofSeconds(10);

    private Builder() {}

    public Builder policy(Policy policy) {
      this.policy = policy;
      return this;
    }

    /** This consumer's zone; null for none. */
    public Builder localZone(String zone) {
      this.localZone = zone;
      return this;
    }

    public Builder minLocalShare(double share) {
      this.minLocalShare = share;
      return this;
    }

    public Builder ewmaDecay(Duration decay) {
      this.ewmaDecay = decay;
      return this;
    }

    public BalancerConfig build() {
      return new BalancerConfig(policy, localZone, minLocalShare, ewmaDecay);
    }
  }
}
