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
 * @param healthyPanicThreshold all-down protection, Envoy's {@code healthy_panic_threshold}: when fewer than this
 *     percent of the {@code UP} endpoints are routable because of local judgement (ejection, probes), route across
 *     all {@code UP} endpoints instead (panic); 0 turns it off, leaving only the panic of "none available"
 *     (default 50)
 * @param slowStartWindow Envoy's {@code slow_start_config.slow_start_window}: an endpoint that joins, or comes back
 *     from ejection, a probe failure or {@code STARTING}, ramps its share of new picks over this long; zero turns
 *     slow start off (default off). Endpoints of the balancer's first set do not ramp: there is no one else
 * @param slowStartAggression Envoy's {@code aggression}: the share is {@code max(minWeight, (t / window)^(1 /
 *     aggression))}, t counted from 1 s as in Envoy; 1.0 is linear, larger ramps faster early (default 1.0)
 * @param slowStartMinWeightPercent Envoy's {@code min_weight_percent}: the share at the start (default 10)
 * @param panicRouting whether panic routing happens at all (default true); false fails a pick when no endpoint is
 *     available, as Envoy does with {@code healthy_panic_threshold} 0: for callers that prefer failing fast, and
 *     the lab's negative control
 * @param maxStale bounded staleness: while the registry is unreachable (the cache stale), the balancer picks from
 *     the last set for up to this long, then applies {@link #stalePolicy}; null picks from it for as long as the
 *     outage lasts (default null, forever). The cache itself keeps its last set either way
 * @param stalePolicy what happens after {@link #maxStale} (default {@link StalePolicy#FAIL_CLOSED})
 */
public record BalancerConfig(Policy policy, String localZone, double minLocalShare, Duration ewmaDecay,
    int healthyPanicThreshold, Duration slowStartWindow, double slowStartAggression, int slowStartMinWeightPercent,
    boolean panicRouting, Duration maxStale, StalePolicy stalePolicy) {

  /** How one endpoint is chosen among the candidates. */
  public enum Policy {
    /** Each candidate in turn, in key order. */
    ROUND_ROBIN,
    /** At random, in proportion to {@code Instance.weight()}. */
    WEIGHTED_RANDOM,
    /**
     * Two distinct candidates at random; the one with the lower load score (see {@link EndpointState#score()}),
     * counting the latency difference only by how much it exceeds the noise of the two estimates; a tie is a coin
     * flip.
     */
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
    if (healthyPanicThreshold < 0 || healthyPanicThreshold > 100) {
      throw new InvalidInputException("healthyPanicThreshold", healthyPanicThreshold, "use 0 (off) to 100 percent");
    }
    if (slowStartWindow == null || slowStartWindow.isNegative()) {
      throw new InvalidInputException("slowStartWindow", slowStartWindow, "use zero (off) or a positive duration");
    }
    if (!(slowStartAggression > 0.0) || Double.isInfinite(slowStartAggression)) {
      throw new InvalidInputException("slowStartAggression", slowStartAggression, "use a positive number, 1.0 for"
          + " a linear ramp");
    }
    if (slowStartMinWeightPercent < 1 || slowStartMinWeightPercent > 100) {
      throw new InvalidInputException("slowStartMinWeightPercent", slowStartMinWeightPercent, "use 1 to 100");
    }
    if (maxStale != null && (maxStale.isNegative() || maxStale.isZero())) {
      throw new InvalidInputException("maxStale", maxStale, "use a positive duration such as 30s, or none to pick"
          + " from the last set for the whole outage");
    }
    stalePolicy = stalePolicy == null ? StalePolicy.FAIL_CLOSED : stalePolicy;
  }

  /**
   * The share of its fair share of new picks an endpoint that became routable {@code sinceNanos} ago gets: 1.0
   * when slow start is off or the window is over, else Envoy's {@code max(minWeight, (max(t, 1 s) / window)^(1 /
   * aggression))}.
   */
  public double slowStartFactor(long sinceNanos) {
    long window = slowStartWindow.toNanos();
    if (window == 0 || sinceNanos >= window) {
      return 1.0;
    }
    double t = Math.max(sinceNanos, 1_000_000_000L) / (double) window;
    double f = Math.pow(Math.min(1.0, t), 1.0 / slowStartAggression);
    return Math.max(slowStartMinWeightPercent / 100.0, Math.min(1.0, f));
  }

  /**
   * Power of two choices, no zone preference, share 0.5, EWMA decay 10 s, panic threshold 50 %, no slow start, no
   * bound on staleness.
   */
  public static BalancerConfig defaults() {
    return builder().build();
  }

  /** A builder holding the {@linkplain #defaults() defaults}. */
  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().policy(policy).localZone(localZone).minLocalShare(minLocalShare).ewmaDecay(ewmaDecay)
        .healthyPanicThreshold(healthyPanicThreshold)
        .slowStart(slowStartWindow, slowStartAggression, slowStartMinWeightPercent).panicRouting(panicRouting)
        .maxStale(maxStale, stalePolicy);
  }

  /** Builds a {@link BalancerConfig}; every value is checked in {@link #build()}. */
  public static final class Builder {
    private Policy policy = Policy.POWER_OF_TWO;
    private String localZone;
    private double minLocalShare = 0.5;
    private Duration ewmaDecay = Duration.ofSeconds(10);
    private int healthyPanicThreshold = 50;
    private Duration slowStartWindow = Duration.ZERO;
    private double slowStartAggression = 1.0;
    private int slowStartMinWeightPercent = 10;
    private boolean panicRouting = true;
    private Duration maxStale;
    private StalePolicy stalePolicy = StalePolicy.FAIL_CLOSED;

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

    /** Percent of UP endpoints that must be routable before panic routing; 0 turns all-down protection off. */
    public Builder healthyPanicThreshold(int percent) {
      this.healthyPanicThreshold = percent;
      return this;
    }

    /** Slow start over {@code window} (zero: off) with Envoy's default aggression 1.0 and min weight 10 %. */
    public Builder slowStart(Duration window) {
      this.slowStartWindow = window;
      return this;
    }

    public Builder slowStart(Duration window, double aggression, int minWeightPercent) {
      this.slowStartWindow = window;
      this.slowStartAggression = aggression;
      this.slowStartMinWeightPercent = minWeightPercent;
      return this;
    }

    /** False: no panic routing at all (a pick with no available endpoint finds none). */
    public Builder panicRouting(boolean on) {
      this.panicRouting = on;
      return this;
    }

    /**
     * Bounded staleness: past {@code maxStale} of registry outage, {@code policy} applies (null {@code maxStale}:
     * never; null {@code policy}: {@link StalePolicy#FAIL_CLOSED}).
     */
    public Builder maxStale(Duration maxStale, StalePolicy policy) {
      this.maxStale = maxStale;
      this.stalePolicy = policy;
      return this;
    }

    public BalancerConfig build() {
      return new BalancerConfig(policy, localZone, minLocalShare, ewmaDecay, healthyPanicThreshold, slowStartWindow,
          slowStartAggression, slowStartMinWeightPercent, panicRouting, maxStale, stalePolicy);
    }
  }
}
