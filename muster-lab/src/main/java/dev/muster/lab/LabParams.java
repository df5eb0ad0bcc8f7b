package dev.muster.lab;

import java.time.Duration;

/**
 * The knobs every scenario shares; {@link #seed()} are the seed articles' values (TTL 3 s, keepalive 1 s, a call
 * every 50 ms, 300 ms attempt timeout, 2 s ejection, 1 retry). Immutable.
 */
public record LabParams(Duration ttl, Duration keepalive, Duration callInterval, Duration attemptTimeout,
    Duration ejectionTime, int maxRetries) {

  public static LabParams seed() {
    return new LabParams(Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofMillis(50), Duration.ofMillis(300),
        Duration.ofSeconds(2), 1);
  }

  static String format(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
