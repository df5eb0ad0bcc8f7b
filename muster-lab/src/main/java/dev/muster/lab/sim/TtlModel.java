package dev.muster.lab.sim;

import java.time.Duration;

/** One model of the TTL trade-off: how long a crash stays visible, and how often a pause removes a live instance. */
interface TtlModel {
  /** The name the table prints, e.g. {@code seed 003}. */
  String name();

  /** The renewal interval the model assumes at {@code ttl} (the heartbeat, or the keepalive). */
  Duration interval(Duration ttl);

  /** Detection delays of {@code samples} crashes at {@code ttl}, from {@code streams}. */
  DelayStats detectionDelay(Duration ttl, Streams streams, int samples);

  /**
   * False removals at {@code ttl} from {@code samples} pauses drawn from {@code pauses} on {@code streams}' pause
   * stream (one Gaussian per sample, so every model sees the same pauses), scaled by {@code pausesPerDay}.
   */
  RemovalEstimate falseRemovals(Duration ttl, LognormalPauses pauses, Streams streams, int samples,
      double pausesPerDay);
}
