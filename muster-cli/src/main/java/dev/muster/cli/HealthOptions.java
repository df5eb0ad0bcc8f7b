package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig;
import dev.muster.cache.CacheConfig;
import dev.muster.balance.StalePolicy;
import dev.muster.grpc.GrpcHealthProbe;
import dev.muster.health.HealthEvent;
import dev.muster.health.HealthListener;
import dev.muster.health.ProbeConfig;
import dev.muster.http.HttpCallConfig;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * {@code muster call}'s health options (issue 16): active probes, all-down protection, slow start and bounded
 * staleness, and the JSON lines of their events. Each option maps onto one field of {@link ProbeConfig},
 * {@link BalancerConfig} or {@link CacheConfig}; their documentation has the details.
 */
final class HealthOptions {
  @Option(names = "--probe", paramLabel = "KIND",
      description = "Probe every endpoint actively, in parallel with the lease: http:/PATH (GET, expecting 200),"
          + " tcp (connect) or grpc[:SERVICE] (grpc.health.v1). Default: no probes.")
  String probe;

  @Option(names = "--probe-interval", paramLabel = "D", defaultValue = "5s", converter = DurationConverter.class,
      description = "Time between probes of one endpoint, ±10 %% jitter (default ${DEFAULT-VALUE}).")
  Duration probeInterval;

  @Option(names = "--probe-timeout", paramLabel = "D", defaultValue = "1s", converter = DurationConverter.class,
      description = "A probe not answered within this fails (default ${DEFAULT-VALUE}).")
  Duration probeTimeout;

  @Option(names = "--probe-expect", paramLabel = "STATUS", defaultValue = "200",
      description = "HTTP statuses that pass, e.g. 200 or 200-399 (default ${DEFAULT-VALUE}).")
  String probeExpect;

  @Option(names = "--unhealthy-threshold", paramLabel = "N", defaultValue = "2",
      description = "Probe failures in a row that take an endpoint out (default ${DEFAULT-VALUE}).")
  int unhealthyThreshold;

  @Option(names = "--healthy-threshold", paramLabel = "M", defaultValue = "2",
      description = "Probe passes in a row that let it back in (default ${DEFAULT-VALUE}).")
  int healthyThreshold;

  @Option(names = "--panic-threshold", paramLabel = "PERCENT", defaultValue = "50",
      description = "All-down protection: below this share of UP endpoints routable, route across all of them"
          + " (default ${DEFAULT-VALUE}; 0: only when none is routable).")
  int panicThreshold;

  @Option(names = "--no-panic", hidden = true,
      description = "Negative control for the lab: no panic routing at all (no routable endpoint, no call).")
  boolean noPanic;

  @Option(names = "--slow-start", paramLabel = "D", defaultValue = "0s", converter = DurationConverter.class,
      description = "Ramp a joining or recovered endpoint's share of new calls over this window (default ${DEFAULT-VALUE}: off).")
  Duration slowStart;

  @Option(names = "--slow-start-aggression", paramLabel = "X", defaultValue = "1.0",
      description = "The ramp's shape, Envoy's aggression: 1.0 linear, larger is faster early (default ${DEFAULT-VALUE}).")
  double slowStartAggression;

  @Option(names = "--slow-start-min-weight", paramLabel = "PERCENT", defaultValue = "10",
      description = "The ramp's starting share (default ${DEFAULT-VALUE}).")
  int slowStartMinWeight;

  @Option(names = "--max-stale", paramLabel = "D", converter = DurationConverter.class,
      description = "While etcd is unreachable, serve the last set for at most this long, then apply --stale-policy"
          + " (default: for the whole outage).")
  Duration maxStale;

  @Option(names = "--stale-policy", paramLabel = "P", defaultValue = "FAIL_CLOSED",
      description = "After --max-stale: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  StalePolicy stalePolicy;

  /** The balancer config with the panic, slow-start and staleness options. */
  BalancerConfig.Builder balancer(BalancerConfig.Builder b) {
    try {
      return b.healthyPanicThreshold(panicThreshold).panicRouting(!noPanic)
          .slowStart(slowStart, slowStartAggression, slowStartMinWeight).maxStale(maxStale, stalePolicy);
    } catch (InvalidInputException e) {
      throw usage(e);
    }
  }

  /** Checks the options; throws {@link Errors.UsageException} (exit 2) naming the flag. */
  void validate() {
    try {
      BalancerConfig.defaults().toBuilder().healthyPanicThreshold(panicThreshold)
          .slowStart(slowStart, slowStartAggression, slowStartMinWeight).build();
    } catch (InvalidInputException e) {
      throw new Errors.UsageException(flagOf(e.getMessage()) + e.getMessage());
    }
    if (maxStale != null && (maxStale.isZero() || maxStale.isNegative())) {
      throw new Errors.UsageException("--max-stale is " + maxStale + ": use a positive duration such as 30s");
    }
    probeConfig();
  }

  /** The probe config, or null without {@code --probe}. */
  ProbeConfig probeConfig() {
    if (probe == null) {
      return null;
    }
    try {
      ProbeConfig c = ProbeConfig.parse(probe).withInterval(probeInterval).withTimeout(probeTimeout)
          .withThresholds(unhealthyThreshold, healthyThreshold);
      return c.kind() == ProbeConfig.Kind.HTTP ? c.withExpectedStatuses(probeExpect) : c;
    } catch (InvalidInputException e) {
      throw new Errors.UsageException("--probe " + probe + ": " + e.getMessage());
    }
  }

  /** The HTTP call config with the probe (a gRPC one from muster-grpc) and the events printed as JSON lines. */
  HttpCallConfig apply(HttpCallConfig config, PrintWriter out, boolean json) {
    ProbeConfig pc = probeConfig();
    HttpCallConfig c = config;
    if (pc != null) {
      c = c.withProbe(pc, pc.kind() == ProbeConfig.Kind.GRPC ? () -> new GrpcHealthProbe(pc) : null);
    }
    return json ? c.withHealthEvents(printer(out)) : c;
  }

  /** Prints each event as a line {@code {"event":"probe_down","service":...,"instance":...,"detail":...}}. */
  static HealthListener printer(PrintWriter out) {
    return (HealthEvent e) -> {
      ObjectNode node = JsonLines.event(e.type().jsonName(), e.at());
      node.put("service", e.service());
      if (e.instance() != null) {
        node.put("instance", e.instance());
      }
      node.put("detail", e.detail());
      JsonLines.print(out, node);
    };
  }

  private static Errors.UsageException usage(InvalidInputException e) {
    return new Errors.UsageException(flagOf(e.getMessage()) + e.getMessage());
  }

  private static String flagOf(String message) {
    if (message.contains("healthyPanicThreshold")) {
      return "--panic-threshold: ";
    }
    if (message.contains("slowStartWindow")) {
      return "--slow-start: ";
    }
    if (message.contains("slowStartAggression")) {
      return "--slow-start-aggression: ";
    }
    if (message.contains("slowStartMinWeightPercent")) {
      return "--slow-start-min-weight: ";
    }
    return "";
  }
}
