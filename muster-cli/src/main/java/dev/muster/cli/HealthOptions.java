package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.InvalidInputException;
import dev.muster.balance.BalancerConfig;
import dev.muster.cache.CacheConfig;
import dev.muster.balance.StalePolicy;
import dev.muster.health.HealthEvent;
import dev.muster.health.HealthListener;
import dev.muster.health.ProbeConfig;
import dev.muster.http.HttpCallConfig;
import java.io.PrintWriter;
import java.time.Duration;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code muster call}'s health options (issue 16): active probes ({@link ProbeOptions}), all-down protection, slow start and bounded
 * staleness, and the JSON lines of their events. Each option maps onto one field of {@link ProbeConfig},
 * {@link BalancerConfig} or {@link CacheConfig}; their documentation has the details.
 */
final class HealthOptions {
  @Mixin
  ProbeOptions probes;

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
    probes.probeConfig();
  }

  /** The HTTP call config with the probe (a gRPC one from muster-grpc) and the events printed as JSON lines. */
  HttpCallConfig apply(HttpCallConfig config, PrintWriter out, boolean json) {
    ProbeConfig pc = probes.probeConfig();
    HttpCallConfig c = config;
    if (pc != null) {
      c = c.withProbe(pc, probes.probeFactory(pc));
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
