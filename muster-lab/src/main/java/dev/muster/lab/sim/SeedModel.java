package dev.muster.lab.sim;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.SplittableRandom;

/**
 * Seed 003's model, exactly as its Go computes it: a crash is removed at the last heartbeat + TTL, so the delay is
 * {@code TTL − U·heartbeat}; a pause is a false removal when it is longer than the TTL, whatever the heartbeat's
 * phase (the seed: "a conservative lower bound"). Exactly, P(removal) = Q(ln(TTL/median)/sigma). Immutable.
 */
final class SeedModel implements TtlModel {
  private final Duration heartbeat;

  SeedModel(Duration heartbeat) {
    this.heartbeat = Objects.requireNonNull(heartbeat, "heartbeat");
  }

  @Override
  public String name() {
    return TtlReport.SEED_MODEL;
  }

  @Override
  public Duration interval(Duration ttl) {
    return heartbeat;
  }

  @Override
  public DelayStats detectionDelay(Duration ttl, Streams streams, int samples) {
    SplittableRandom deaths = streams.deaths();
    double t = Sims.seconds(ttl);
    double hb = Sims.seconds(heartbeat);
    double[] delays = new double[samples];
    for (int i = 0; i < samples; i++) {
      delays[i] = t - deaths.nextDouble() * hb;
    }
    return DelayStats.of(delays, Optional.of(DelayStats.ofUniformSum(t - hb, hb, 0)));
  }

  @Override
  public RemovalEstimate falseRemovals(Duration ttl, LognormalPauses pauses, Streams streams, int samples,
      double pausesPerDay) {
    SplittableRandom random = streams.pauses();
    double t = Sims.seconds(ttl);
    long hits = 0;
    for (int i = 0; i < samples; i++) {
      if (pauses.sampleSeconds(random) > t) {
        hits++;
      }
    }
    return new RemovalEstimate(hits, samples, pausesPerDay, OptionalDouble.of(pauses.survival(t)));
  }
}
