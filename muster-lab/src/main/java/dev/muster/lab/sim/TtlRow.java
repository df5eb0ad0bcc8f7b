package dev.muster.lab.sim;

import java.time.Duration;
import java.util.Objects;

/**
 * One row of {@code muster sim ttl}: a model at one TTL and one sigma. The detection delay does not depend on sigma;
 * the rows of one model and TTL share it.
 *
 * @param model the model's name ({@code seed 003}, {@code Muster})
 * @param interval the renewal interval the model used at this TTL (heartbeat or keepalive)
 */
public record TtlRow(String model, Duration ttl, Duration interval, double sigma, DelayStats delay,
    RemovalEstimate removals) {
  public TtlRow {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(ttl, "ttl");
    Objects.requireNonNull(interval, "interval");
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(removals, "removals");
  }
}
