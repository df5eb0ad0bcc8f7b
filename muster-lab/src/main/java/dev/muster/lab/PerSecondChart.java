package dev.muster.lab;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A figure a scenario measured once per second, one line per consumer (or per anything else it compares), for the
 * report's per-second chart: e.g. p1's share of each consumer's calls in each second after the consumer let p1 back
 * in. The values are the scenario's own, computed from the logs; the report only draws them.
 *
 * @param y what a value is, with its unit (the y axis), e.g. {@code p1's share of the calls started in that second, %}
 * @param x what second 0 is (the x axis: seconds since that), e.g. {@code the consumer's probe_up of p1}
 * @param lines the series, each one value per second from second 0
 */
public record PerSecondChart(String y, String x, List<Line> lines) {
  public PerSecondChart {
    Objects.requireNonNull(y, "y");
    Objects.requireNonNull(x, "x");
    lines = List.copyOf(lines);
  }

  /**
   * One series: {@code values.get(i)} is second {@code i}'s figure, null for a second without one (no call started
   * in it).
   */
  public record Line(String label, List<Double> values) {
    public Line {
      Objects.requireNonNull(label, "label");
      values = Collections.unmodifiableList(new ArrayList<>(values)); // nulls allowed: List.copyOf refuses them
    }
  }
}
