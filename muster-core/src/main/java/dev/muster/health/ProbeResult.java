package dev.muster.health;

import java.util.Objects;

/**
 * One probe's verdict and what it saw ({@code "200"}, {@code "503"}, {@code "connection refused"},
 * {@code "timed out after 1000 ms"}, {@code "NOT_SERVING"}).
 */
public record ProbeResult(boolean healthy, String detail) {
  public ProbeResult {
    Objects.requireNonNull(detail, "detail");
  }

  public static ProbeResult pass(String detail) {
    return new ProbeResult(true, detail);
  }

  public static ProbeResult fail(String detail) {
    return new ProbeResult(false, detail);
  }
}
