package dev.muster.lab.sim;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * What Muster's registrar and etcd 3.4 do (docs/sim-ttl.md lists every source line this rests on):
 *
 * <ul>
 *   <li>a keepalive every K = TTL/3 ({@code RegistrarConfig}), or the given interval; a process resumed after a
 *       pause runs its overdue keepalive at once, so a pause costs nothing unless the lease ends during it;
 *   <li>etcd sets {@code expiry = renewal + TTL} and refuses to renew an expired lease even before revoking it
 *       ({@code lessor.Renew}): a pause that starts {@code a} after the last renewal removes the instance iff it is
 *       longer than {@code TTL − a}, the phase seed 003 leaves out;
 *   <li>etcd revokes expired leases in a loop that waits 500 ms between scans ({@code lessor.runLoop}): a crash's
 *       key goes at the first scan after the expiry, uniform in [0, 500 ms) later;
 *   <li>a new leader extends every lease to {@code now + electionTimeout + TTL} ({@code lessor.Promote}); leader
 *       changes arrive as a Poisson process of {@code leaderChangesPerDay}.
 * </ul>
 *
 * With no leader changes, P(removal) = (1/K) ∫₀ᴷ Q(ln((TTL − a)/median)/sigma) da, integrated by Simpson's rule.
 * Immutable.
 */
final class MusterModel implements TtlModel {
  /** etcd 3.4 {@code lessor.runLoop}: {@code time.After(500 * time.Millisecond)} between expiry scans. */
  static final Duration EXPIRY_SCAN = Duration.ofMillis(500);
  /** etcd's default {@code --election-timeout} (1000 ms), the extension {@code Promote} adds to every lease. */
  static final Duration ELECTION_TIMEOUT = Duration.ofSeconds(1);
  private static final double SECONDS_PER_DAY = 86_400;
  private static final int SIMPSON_INTERVALS = 2000;

  private final Optional<Duration> keepalive;
  private final double promotionsPerSecond;

  /**
   * @param keepalive the interval for every TTL; empty derives TTL/3
   * @param leaderChangesPerDay leader changes per day, 0 for none
   */
  MusterModel(Optional<Duration> keepalive, double leaderChangesPerDay) {
    this.keepalive = Objects.requireNonNull(keepalive, "keepalive");
    this.promotionsPerSecond = leaderChangesPerDay / SECONDS_PER_DAY;
  }

  @Override
  public String name() {
    return TtlReport.MUSTER_MODEL;
  }

  @Override
  public Duration interval(Duration ttl) {
    return keepalive.orElse(ttl.dividedBy(3));
  }

  @Override
  public DelayStats detectionDelay(Duration ttl, Streams streams, int samples) {
    SplittableRandom deaths = streams.deaths();
    SplittableRandom scans = streams.scans();
    SplittableRandom promotions = streams.promotions();
    double t = Sims.seconds(ttl);
    double k = Sims.seconds(interval(ttl));
    double scan = Sims.seconds(EXPIRY_SCAN);
    double[] delays = new double[samples];
    for (int i = 0; i < samples; i++) {
      double phase = deaths.nextDouble() * k; // since the last renewal; the crash is at time 0
      double expiry = extendedExpiry(-phase, t - phase, t, promotions);
      delays[i] = expiry + scans.nextDouble() * scan;
    }
    // delay = TTL − K·U + scan·W = (TTL − K) + K·(1 − U) + scan·W: a sum of two uniforms.
    return DelayStats.of(delays, promotionsPerSecond == 0 ? Optional.of(DelayStats.ofUniformSum(t - k, k, scan))
        : Optional.empty());
  }

  @Override
  public RemovalEstimate falseRemovals(Duration ttl, LognormalPauses pauses, Streams streams, int samples,
      double pausesPerDay) {
    SplittableRandom pauseStream = streams.pauses();
    SplittableRandom phases = streams.phases();
    SplittableRandom promotions = streams.promotions();
    double t = Sims.seconds(ttl);
    double k = Sims.seconds(interval(ttl));
    long hits = 0;
    for (int i = 0; i < samples; i++) {
      double pause = pauses.sampleSeconds(pauseStream);
      double phase = phases.nextDouble() * k; // the pause starts at time 0
      if (pause > extendedExpiry(-phase, t - phase, t, promotions)) {
        hits++;
      }
    }
    OptionalDouble exact = promotionsPerSecond == 0 ? OptionalDouble.of(removalProbability(t, k, pauses))
        : OptionalDouble.empty();
    return new RemovalEstimate(hits, samples, pausesPerDay, exact);
  }

  /**
   * The rule of a pause, on its own: removed iff the pause outlasts what is left of the lease when it starts.
   * {@link TtlValidation} holds real processes to it.
   */
  static boolean removes(Duration pause, Duration phase, Duration ttl) {
    return pause.compareTo(ttl.minus(phase)) > 0;
  }

  /** P(a pause removes the instance) with no leader changes: the phase-averaged survival of the pause. */
  static double removalProbability(double ttl, double keepalive, LognormalPauses pauses) {
    double h = keepalive / SIMPSON_INTERVALS;
    double sum = pauses.survival(ttl) + pauses.survival(ttl - keepalive);
    for (int i = 1; i < SIMPSON_INTERVALS; i++) {
      sum += (i % 2 == 1 ? 4 : 2) * pauses.survival(ttl - i * h);
    }
    return sum * h / 3 / keepalive;
  }

  /**
   * The lease's expiry once leader changes are applied: from the last renewal at {@code renewal}, each promotion
   * before the current expiry moves it to {@code promotion + electionTimeout + TTL}.
   */
  private double extendedExpiry(double renewal, double expiry, double ttl, RandomGenerator promotions) {
    if (promotionsPerSecond == 0) {
      return expiry;
    }
    double extension = Sims.seconds(ELECTION_TIMEOUT) + ttl;
    for (double at = renewal + exponential(promotions); at < expiry; at += exponential(promotions)) {
      expiry = at + extension;
    }
    return expiry;
  }

  private double exponential(RandomGenerator random) {
    return -Math.log(1 - random.nextDouble()) / promotionsPerSecond;
  }
}
