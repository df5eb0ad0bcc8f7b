package dev.muster.cli;

import dev.muster.InvalidInputException;
import dev.muster.grpc.GrpcHealthProbe;
import dev.muster.health.Probe;
import dev.muster.health.ProbeConfig;
import java.time.Duration;
import java.util.function.Supplier;
import picocli.CommandLine.Option;

/**
 * Active probes, as {@code muster call} and {@code muster xds} take them: each option maps onto one field of
 * {@link ProbeConfig}, whose documentation has the details.
 */
final class ProbeOptions {
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

  /** The probe a gRPC probe config needs (muster-grpc's health check), or null for the core's HTTP and TCP. */
  Supplier<Probe> probeFactory(ProbeConfig pc) {
    return pc.kind() == ProbeConfig.Kind.GRPC ? () -> new GrpcHealthProbe(pc) : null;
  }
}
