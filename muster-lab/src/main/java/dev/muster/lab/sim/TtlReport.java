package dev.muster.lab.sim;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** What {@link TtlSim} computed: the config and its rows, seed 003's model first. Immutable. */
public record TtlReport(TtlSimConfig config, List<TtlRow> rows) {
  public static final String SEED_MODEL = "seed 003";
  public static final String MUSTER_MODEL = "Muster";

  public TtlReport {
    Objects.requireNonNull(config, "config");
    rows = List.copyOf(rows);
  }

  /** The rows of {@code model}, in the grid's order. */
  public List<TtlRow> rows(String model) {
    return rows.stream().filter(r -> r.model().equals(model)).toList();
  }

  /** The row of {@code model} at {@code ttl} and {@code sigma}. */
  public Optional<TtlRow> row(String model, Duration ttl, double sigma) {
    return rows.stream().filter(r -> r.model().equals(model) && r.ttl().equals(ttl) && r.sigma() == sigma)
        .findFirst();
  }
}
