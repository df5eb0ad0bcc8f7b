package dev.muster.lab.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Runs both models over the grid of a {@link TtlSimConfig}: for each model, each TTL (its detection delay) and each
 * sigma × TTL (its false removals). Single-threaded and deterministic: the same config gives the same report.
 */
public final class TtlSim {
  private TtlSim() {}

  /** Seed 003's model, then Muster's; within each, every sigma in the order given, every TTL within it. */
  public static TtlReport run(TtlSimConfig config) {
    Objects.requireNonNull(config, "config");
    Streams streams = new Streams(config.seed());
    List<TtlRow> rows = new ArrayList<>();
    for (TtlModel model : models(config)) {
      Map<Duration, DelayStats> delays = new LinkedHashMap<>();
      for (Duration ttl : config.ttls()) {
        delays.put(ttl, model.detectionDelay(ttl, streams, config.delaySamples()));
      }
      for (double sigma : config.sigmas()) { // sigma outside, TTL inside: the seed's table
        LognormalPauses pauses = new LognormalPauses(config.pauseMedian(), sigma);
        for (Duration ttl : config.ttls()) {
          RemovalEstimate removals = model.falseRemovals(ttl, pauses, streams, config.samples(),
              config.pausesPerDayTotal());
          rows.add(new TtlRow(model.name(), ttl, model.interval(ttl), sigma, delays.get(ttl), removals));
        }
      }
    }
    return new TtlReport(config, rows);
  }

  static List<TtlModel> models(TtlSimConfig config) {
    return List.of(new SeedModel(config.heartbeat()),
        new MusterModel(config.keepalive(), config.leaderChangesPerDay()));
  }
}
