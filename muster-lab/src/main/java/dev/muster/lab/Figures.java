package dev.muster.lab;

import java.util.List;
import java.util.Objects;

/**
 * What one scenario measured, as the scenario computed it from the logs: the one-line summary readers see in
 * {@code output.txt} and the report's table, the stale windows (when the scenario measures them) and a per-second
 * chart (when it draws one) that the report charts. Renderers read these fields; nothing parses the summary back.
 *
 * @param summary the figures in words, e.g. {@code window 2677 ms; B 19 failures of 58 calls, A 0 of 59 ...}
 * @param staleWindows the stale windows in the order measured (round 1, 2, ...); empty for other scenarios
 * @param perSecond a figure per second to chart (e.g. an endpoint's share of the calls after it came back), or null
 */
public record Figures(String summary, List<StaleWindow> staleWindows, PerSecondChart perSecond) {
  public Figures {
    Objects.requireNonNull(summary, "summary");
    staleWindows = List.copyOf(staleWindows);
  }

  public Figures(String summary, List<StaleWindow> staleWindows) {
    this(summary, staleWindows, null);
  }

  public static Figures of(String summary) {
    return new Figures(summary, List.of());
  }

  public static Figures withWindows(String summary, List<StaleWindow> staleWindows) {
    return new Figures(summary, staleWindows);
  }

  public static Figures withPerSecond(String summary, PerSecondChart perSecond) {
    return new Figures(summary, List.of(), Objects.requireNonNull(perSecond, "perSecond"));
  }
}
