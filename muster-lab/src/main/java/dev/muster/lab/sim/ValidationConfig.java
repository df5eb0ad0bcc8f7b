package dev.muster.lab.sim;

import dev.muster.registry.RegistrarConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * What {@code muster sim ttl --validate} runs: how many providers, how many pauses each, their lease, and the
 * pauses' distribution, scaled to the short TTL (the median defaults to 0.8 × TTL, so about half the pauses outlast
 * what is left of the lease). Immutable; {@link #plan()} draws the pauses from the seeded streams.
 *
 * @param providers provider processes, 1 to {@value #MAX_PROVIDERS}
 * @param rounds pauses per provider, one after another
 * @param ttl the providers' lease TTL (whole seconds, at least etcd's 2 s); their keepalive is TTL/3
 * @param pauseMedian the pauses' median
 * @param sigma the pauses' log standard deviation
 * @param seed the seed of the phase and pause streams
 */
public record ValidationConfig(int providers, int rounds, Duration ttl, Duration pauseMedian, double sigma,
    long seed) {
  static final int MAX_PROVIDERS = 100;
  static final int MAX_ROUNDS = 20;

  public ValidationConfig {
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(pauseMedian, "pauseMedian");
    if (providers < 1 || providers > MAX_PROVIDERS) {
      throw Sims.invalid("--validate-providers", providers, "use 1 to " + MAX_PROVIDERS + " (each is a JVM)");
    }
    if (rounds < 1 || rounds > MAX_ROUNDS) {
      throw Sims.invalid("--validate-rounds", rounds, "use 1 to " + MAX_ROUNDS);
    }
    if (ttl.compareTo(RegistrarConfig.MIN_TTL) < 0 || ttl.toMillis() % 1000 != 0) {
      throw Sims.invalid("--validate-ttl", ttl, "use whole seconds, at least 2s (etcd's minimum lease TTL)");
    }
    if (pauseMedian.isNegative() || pauseMedian.isZero()) {
      throw Sims.invalid("--validate-pause-median", pauseMedian, "use a positive duration, e.g. 2s");
    }
    if (!(sigma > 0) || Double.isInfinite(sigma)) {
      throw Sims.invalid("--validate-sigma", sigma, "use a number above 0, e.g. 1.0");
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The providers' keepalive: TTL/3, as {@code muster register} derives it. */
  public Duration keepalive() {
    return ttl.dividedBy(3);
  }

  /**
   * The longest pause: twice the TTL. Every pause above the TTL removes the instance whatever its phase, so capping
   * there changes no prediction and keeps the run short.
   */
  public Duration pauseCap() {
    return ttl.multipliedBy(2);
  }

  /** The pauses to inflict, provider by provider ({@code p1..pN}), round by round; the same for the same seed. */
  public List<PlannedPause> plan() {
    Streams streams = new Streams(seed);
    SplittableRandom pauses = streams.pauses();
    SplittableRandom phases = streams.phases();
    LognormalPauses distribution = new LognormalPauses(pauseMedian, sigma);
    double k = Sims.seconds(keepalive());
    double cap = Sims.seconds(pauseCap());
    List<PlannedPause> plan = new ArrayList<>();
    for (int p = 1; p <= providers; p++) {
      for (int r = 1; r <= rounds; r++) {
        Duration pause = Sims.duration(Math.min(cap, distribution.sampleSeconds(pauses)));
        Duration phase = Sims.duration(phases.nextDouble() * k);
        plan.add(new PlannedPause("p" + p, r, phase, pause, MusterModel.removes(pause, phase, ttl)));
      }
    }
    return plan;
  }

  /** P(a pause removes the instance) in Muster's model for these parameters (no leader changes), exactly. */
  public double removalProbability() {
    return MusterModel.removalProbability(Sims.seconds(ttl), Sims.seconds(keepalive()),
        new LognormalPauses(pauseMedian, sigma));
  }

  /** One line saying what will run. */
  public String describe() {
    return String.format(Locale.ROOT, "muster sim ttl --validate: %d providers × %d pauses on a private etcd"
        + " (127.0.0.1), TTL %s, keepalive %s; pauses lognormal, median %s, sigma %s, capped at %s; seed %d",
        providers, rounds, Sims.format(ttl), Sims.format(keepalive()), Sims.format(pauseMedian),
        TtlTable.number(sigma), Sims.format(pauseCap()), seed);
  }

  /**
   * One pause as the model drew it.
   *
   * @param phase how long after a renewal the pause starts
   * @param predictedRemoval the model's verdict: the pause outlasts {@code TTL − phase}
   */
  public record PlannedPause(String provider, int round, Duration phase, Duration pause, boolean predictedRemoval) {}

  /** Builds a {@link ValidationConfig}: 20 providers × 2 pauses, TTL 3 s, median 0.8 × TTL, sigma 1.0, seed 7. */
  public static final class Builder {
    private int providers = 20;
    private int rounds = 2;
    private Duration ttl = Duration.ofSeconds(3);
    private Duration pauseMedian;
    private double sigma = 1.0;
    private long seed = 7;

    private Builder() {}

    public Builder providers(int providers) {
      this.providers = providers;
      return this;
    }

    public Builder rounds(int rounds) {
      this.rounds = rounds;
      return this;
    }

    public Builder ttl(Duration ttl) {
      this.ttl = ttl;
      return this;
    }

    /** The pauses' median; {@code null} derives it again (0.8 × TTL). */
    public Builder pauseMedian(Duration pauseMedian) {
      this.pauseMedian = pauseMedian;
      return this;
    }

    public Builder sigma(double sigma) {
      this.sigma = sigma;
      return this;
    }

    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    public ValidationConfig build() {
      Objects.requireNonNull(ttl, "ttl");
      Duration median = pauseMedian != null ? pauseMedian : Duration.ofMillis(ttl.toMillis() * 4 / 5);
      return new ValidationConfig(providers, rounds, ttl, median, sigma, seed);
    }
  }
}
