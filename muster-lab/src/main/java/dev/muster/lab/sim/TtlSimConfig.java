package dev.muster.lab.sim;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code muster sim ttl} computes. Immutable; {@link #defaults()} are seed 003's parameters (heartbeat 5 s, TTL
 * 15/30/60 s, 1,000 instances, 2 pauses per instance per day, median 0.5 s, sigma 1.0 and 1.5, 2,000,000 pause
 * samples and 100,000 delay samples per row). Every rule is checked in the constructor; a message names the flag and
 * the value ({@link dev.muster.InvalidInputException}).
 *
 * @param heartbeat the seed model's heartbeat interval
 * @param keepalive the Muster model's keepalive interval for every TTL; empty derives TTL/3, as the registrar does
 * @param ttls the lease TTLs, one group of rows each
 * @param instances how many providers hold a lease
 * @param pausesPerDay pauses per instance and day
 * @param pauseMedian the pauses' median
 * @param sigmas the pauses' log standard deviations, one row each per TTL
 * @param leaderChangesPerDay etcd leader changes per day (Muster model; each extends every lease)
 * @param seed the seed of every random stream
 * @param samples pause samples per row
 * @param delaySamples detection-delay samples per TTL
 */
public record TtlSimConfig(Duration heartbeat, Optional<Duration> keepalive, List<Duration> ttls, int instances,
    double pausesPerDay, Duration pauseMedian, List<Double> sigmas, double leaderChangesPerDay, long seed, int samples,
    int delaySamples) {

  /** The sort index of the 99th percentile needs this many samples to mean something. */
  static final int MIN_DELAY_SAMPLES = 100;

  public TtlSimConfig {
    Objects.requireNonNull(heartbeat, "heartbeat");
    Objects.requireNonNull(keepalive, "keepalive");
    ttls = List.copyOf(ttls);
    Objects.requireNonNull(pauseMedian, "pauseMedian");
    sigmas = List.copyOf(sigmas);
    positive("--heartbeat", heartbeat);
    if (ttls.isEmpty()) {
      throw Sims.invalid("--ttl", "", "give at least one TTL, e.g. 15s,30s,60s");
    }
    for (Duration ttl : ttls) {
      positive("--ttl", ttl);
      if (ttl.compareTo(heartbeat) <= 0) {
        throw Sims.invalid("--ttl", ttl, "use a TTL above the heartbeat (" + Sims.format(heartbeat) + "): a"
            + " heartbeat must be able to arrive before the lease ends");
      }
    }
    if (keepalive.isPresent()) {
      Duration k = keepalive.get();
      positive("--keepalive", k);
      for (Duration ttl : ttls) {
        if (k.compareTo(ttl) >= 0) {
          throw Sims.invalid("--keepalive", k, "use a keepalive below every TTL (" + Sims.format(ttl) + "), or"
              + " leave it out for TTL/3");
        }
      }
    }
    if (instances < 1) {
      throw Sims.invalid("--instances", instances, "use 1 or more");
    }
    nonNegative("--pauses-per-day", pausesPerDay);
    if (sigmas.isEmpty()) {
      throw Sims.invalid("--sigma", "", "give at least one sigma, e.g. 1.0,1.5");
    }
    for (double sigma : sigmas) {
      new LognormalPauses(pauseMedian, sigma); // checks both
    }
    nonNegative("--leader-changes-per-day", leaderChangesPerDay);
    if (samples < 1) {
      throw Sims.invalid("--samples", samples, "use 1 or more (the seed used 2000000)");
    }
    if (delaySamples < MIN_DELAY_SAMPLES) {
      throw Sims.invalid("--delay-samples", delaySamples, "use " + MIN_DELAY_SAMPLES + " or more (the seed used"
          + " 100000)");
    }
  }

  /** Seed 003's parameters, seed 7 (the seed's Go seeds its pause stream with 7). */
  public static TtlSimConfig defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder().heartbeat(heartbeat).keepalive(keepalive.orElse(null)).ttls(ttls).instances(instances)
        .pausesPerDay(pausesPerDay).pauseMedian(pauseMedian).sigmas(sigmas).leaderChangesPerDay(leaderChangesPerDay)
        .seed(seed).samples(samples).delaySamples(delaySamples);
  }

  /** instances × pauses per day: what a per-pause probability is multiplied by to give removals per day. */
  double pausesPerDayTotal() {
    return instances * pausesPerDay;
  }

  private static void positive(String field, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw Sims.invalid(field, d, "use a positive duration");
    }
  }

  private static void nonNegative(String field, double value) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw Sims.invalid(field, value, "use 0 or more");
    }
  }

  /** Builds a {@link TtlSimConfig}; starts from seed 003's parameters. */
  public static final class Builder {
    private Duration heartbeat = Duration.ofSeconds(5);
    private Duration keepalive;
    private List<Duration> ttls = List.of(Duration.ofSeconds(15), Duration.ofSeconds(30), Duration.ofSeconds(60));
    private int instances = 1000;
    private double pausesPerDay = 2;
    private Duration pauseMedian = Duration.ofMillis(500);
    private List<Double> sigmas = List.of(1.0, 1.5);
    private double leaderChangesPerDay;
    private long seed = 7;
    private int samples = 2_000_000;
    private int delaySamples = 100_000;

    private Builder() {}

    public Builder heartbeat(Duration heartbeat) {
      this.heartbeat = heartbeat;
      return this;
    }

    /** The Muster model's keepalive for every TTL; {@code null} derives TTL/3 again. */
    public Builder keepalive(Duration keepalive) {
      this.keepalive = keepalive;
      return this;
    }

    public Builder ttls(List<Duration> ttls) {
      this.ttls = ttls;
      return this;
    }

    public Builder instances(int instances) {
      this.instances = instances;
      return this;
    }

    public Builder pausesPerDay(double pausesPerDay) {
      this.pausesPerDay = pausesPerDay;
      return this;
    }

    public Builder pauseMedian(Duration pauseMedian) {
      this.pauseMedian = pauseMedian;
      return this;
    }

    public Builder sigmas(List<Double> sigmas) {
      this.sigmas = sigmas;
      return this;
    }

    public Builder leaderChangesPerDay(double leaderChangesPerDay) {
      this.leaderChangesPerDay = leaderChangesPerDay;
      return this;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    public Builder samples(int samples) {
      this.samples = samples;
      return this;
    }

    public Builder delaySamples(int delaySamples) {
      this.delaySamples = delaySamples;
      return this;
    }

    public TtlSimConfig build() {
      return new TtlSimConfig(heartbeat, Optional.ofNullable(keepalive), ttls, instances, pausesPerDay, pauseMedian,
          sigmas, leaderChangesPerDay, seed, samples, delaySamples);
    }
  }
}
