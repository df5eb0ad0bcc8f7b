package dev.muster.health;

import dev.muster.InvalidInputException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * How a consumer probes each endpoint of a service, in parallel with the lease (Envoy's {@code HealthCheck}, with
 * its field names). Immutable; {@link #http(String)}, {@link #tcp()}, {@link #grpc(String)} or {@link #parse}
 * start from the defaults.
 *
 * @param kind HTTP GET, TCP connect, or {@code grpc.health.v1/Check}
 * @param path the HTTP path to GET (HTTP only; otherwise null)
 * @param grpcService the service name to ask {@code grpc.health.v1} about, "" for the server as a whole (gRPC only)
 * @param expectedStatusMin lowest HTTP status that passes (default 200, as Envoy's {@code expected_statuses})
 * @param expectedStatusMax highest HTTP status that passes (default 200)
 * @param interval time between the end of one probe and the start of the next (default 5 s)
 * @param jitterPercent each interval is drawn from ±this share of it ({@code interval_jitter_percent}; default 10)
 * @param timeout a probe not answered within this fails (default 1 s)
 * @param unhealthyThreshold this many failures in a row take the endpoint out (default 2, seed 001's "2 failures")
 * @param healthyThreshold this many passes in a row let an endpoint that was taken out back in (default 2)
 * @param threads the probe pool's threads, per service (default 2); probes are asynchronous, so a few threads
 *     keep hundreds of endpoints probed
 */
public record ProbeConfig(Kind kind, String path, String grpcService, int expectedStatusMin, int expectedStatusMax,
    Duration interval, int jitterPercent, Duration timeout, int unhealthyThreshold, int healthyThreshold,
    int threads) {

  /** What a probe does. */
  public enum Kind {
    /** GET {@code path}; passes when the status is in the expected range. Redirects are not followed. */
    HTTP,
    /** Opens a TCP connection and closes it; passes when the connection is accepted. */
    TCP,
    /** {@code grpc.health.v1.Health/Check}; passes on {@code SERVING} only (needs {@code muster-grpc}'s probe). */
    GRPC
  }

  public ProbeConfig {
    Objects.requireNonNull(kind, "kind");
    if (kind == Kind.HTTP && (path == null || !path.startsWith("/"))) {
      throw new InvalidInputException("probe path", path, "use an absolute path such as /health");
    }
    if (expectedStatusMin < 100 || expectedStatusMax > 599 || expectedStatusMin > expectedStatusMax) {
      throw new InvalidInputException("expected status", expectedStatusMin + "-" + expectedStatusMax,
          "use a range within 100-599, such as 200 or 200-399");
    }
    positive("probe interval", interval);
    positive("probe timeout", timeout);
    if (jitterPercent < 0 || jitterPercent > 100) {
      throw new InvalidInputException("probe jitter percent", jitterPercent, "use 0 to 100");
    }
    if (unhealthyThreshold < 1) {
      throw new InvalidInputException("unhealthyThreshold", unhealthyThreshold, "use 1 or more probe failures");
    }
    if (healthyThreshold < 1) {
      throw new InvalidInputException("healthyThreshold", healthyThreshold, "use 1 or more probe passes");
    }
    if (threads < 1 || threads > 64) {
      throw new InvalidInputException("probe threads", threads, "use 1 to 64");
    }
    grpcService = grpcService == null ? "" : grpcService;
  }

  private static void positive(String field, Duration d) {
    if (d == null || d.isNegative() || d.isZero()) {
      throw new InvalidInputException(field, d, "use a positive duration such as 5s");
    }
  }

  private static ProbeConfig of(Kind kind, String path, String grpcService) {
    return new ProbeConfig(kind, path, grpcService, 200, 200, Duration.ofSeconds(5), 10, Duration.ofSeconds(1), 2,
        2, 2);
  }

  /** HTTP GET of {@code path} with the defaults. */
  public static ProbeConfig http(String path) {
    return of(Kind.HTTP, path, null);
  }

  /** TCP connect with the defaults. */
  public static ProbeConfig tcp() {
    return of(Kind.TCP, null, null);
  }

  /** {@code grpc.health.v1/Check} of {@code service} ("" for the whole server) with the defaults. */
  public static ProbeConfig grpc(String service) {
    return of(Kind.GRPC, null, service);
  }

  /**
   * The command line's form: {@code http:/health}, {@code tcp}, {@code grpc} or {@code grpc:SERVICE}, with the
   * defaults. Anything else is an {@link InvalidInputException} that says what is accepted.
   */
  public static ProbeConfig parse(String spec) {
    String s = spec == null ? "" : spec.trim();
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.startsWith("http:")) {
      return http(s.substring("http:".length()));
    }
    if (lower.equals("tcp")) {
      return tcp();
    }
    if (lower.equals("grpc")) {
      return grpc("");
    }
    if (lower.startsWith("grpc:")) {
      return grpc(s.substring("grpc:".length()));
    }
    throw new InvalidInputException("probe", spec, "use http:/PATH, tcp, grpc or grpc:SERVICE");
  }

  /** Parses {@code 200} or {@code 200-399} into this config's expected statuses. */
  public ProbeConfig withExpectedStatuses(String range) {
    String[] parts = range == null ? new String[0] : range.trim().split("-", -1);
    try {
      int lo = Integer.parseInt(parts[0].trim());
      int hi = parts.length == 1 ? lo : Integer.parseInt(parts[1].trim());
      if (parts.length > 2) {
        throw new NumberFormatException();
      }
      return new ProbeConfig(kind, path, grpcService, lo, hi, interval, jitterPercent, timeout, unhealthyThreshold,
          healthyThreshold, threads);
    } catch (RuntimeException e) {
      if (e instanceof InvalidInputException i) {
        throw i;
      }
      throw new InvalidInputException("expected status", range, "use a status such as 200 or a range such as 200-399");
    }
  }

  public ProbeConfig withInterval(Duration d) {
    return new ProbeConfig(kind, path, grpcService, expectedStatusMin, expectedStatusMax, d, jitterPercent, timeout,
        unhealthyThreshold, healthyThreshold, threads);
  }

  public ProbeConfig withJitterPercent(int percent) {
    return new ProbeConfig(kind, path, grpcService, expectedStatusMin, expectedStatusMax, interval, percent, timeout,
        unhealthyThreshold, healthyThreshold, threads);
  }

  public ProbeConfig withTimeout(Duration d) {
    return new ProbeConfig(kind, path, grpcService, expectedStatusMin, expectedStatusMax, interval, jitterPercent, d,
        unhealthyThreshold, healthyThreshold, threads);
  }

  public ProbeConfig withThresholds(int unhealthy, int healthy) {
    return new ProbeConfig(kind, path, grpcService, expectedStatusMin, expectedStatusMax, interval, jitterPercent,
        timeout, unhealthy, healthy, threads);
  }

  public ProbeConfig withThreads(int n) {
    return new ProbeConfig(kind, path, grpcService, expectedStatusMin, expectedStatusMax, interval, jitterPercent,
        timeout, unhealthyThreshold, healthyThreshold, n);
  }

  /** {@code http GET /health expecting 200}, {@code tcp connect}, {@code grpc.health.v1 Check("")}. */
  public String describe() {
    return switch (kind) {
      case HTTP -> "http GET " + path + " expecting " + (expectedStatusMin == expectedStatusMax
          ? String.valueOf(expectedStatusMin) : expectedStatusMin + "-" + expectedStatusMax);
      case TCP -> "tcp connect";
      case GRPC -> "grpc.health.v1 Check(\"" + grpcService + "\")";
    };
  }
}
