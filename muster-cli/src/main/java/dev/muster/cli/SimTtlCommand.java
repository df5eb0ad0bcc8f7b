package dev.muster.cli;

import dev.muster.lab.sim.TtlReport;
import dev.muster.lab.sim.TtlSim;
import dev.muster.lab.sim.TtlSimConfig;
import dev.muster.lab.sim.TtlTable;
import dev.muster.lab.sim.TtlValidation;
import dev.muster.lab.sim.ValidationConfig;
import dev.muster.lab.sim.ValidationReport;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster sim ttl}: seed 003's TTL trade-off (detection delay against false removals) in its own model and in
 * Muster's, as a table and optionally a CSV; with {@code --validate}, Muster's model against real provider processes
 * SIGSTOPped on a private etcd (exit 1 when a pause clear of the boundary contradicts the model). docs/sim-ttl.md.
 */
@Command(
    name = "ttl",
    mixinStandardHelpOptions = true,
    description = {"Detection delay (P50/P99/max) and false removals per day and year from lognormal pauses, for each"
        + " TTL and sigma: seed 003's model exactly (its defaults print its table), and Muster's (keepalive TTL/3, a"
        + " pause removes only when it outlasts what is left of the lease, etcd's 500 ms expiry scan, leader changes),"
        + " with Monte Carlo standard errors and exact values.",
        "With --validate: real 'muster register' processes on a private etcd (127.0.0.1), each SIGSTOPped for pauses"
            + " sampled from the model, and the lost leases compared with the model's prediction, pause by pause."})
final class SimTtlCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdBinaryOptions etcdBinary;

  @Option(names = "--heartbeat", paramLabel = "D", defaultValue = "5s", converter = DurationConverter.class,
      description = "Seed 003's model: the heartbeat interval (default ${DEFAULT-VALUE}).")
  Duration heartbeat;

  @Option(names = "--keepalive", paramLabel = "D", converter = DurationConverter.class,
      description = "Muster's model: the keepalive interval for every TTL (default TTL/3, as muster register).")
  Duration keepalive;

  @Option(names = "--ttl", paramLabel = "D", split = ",", defaultValue = "15s,30s,60s",
      converter = DurationConverter.class, description = "Lease TTLs, comma-separated (default ${DEFAULT-VALUE}).")
  List<Duration> ttls;

  @Option(names = "--instances", paramLabel = "N", defaultValue = "1000",
      description = "Providers holding a lease (default ${DEFAULT-VALUE}).")
  int instances;

  @Option(names = "--pauses-per-day", paramLabel = "X", defaultValue = "2",
      description = "Pauses (GC, VM migration, stalls) per instance per day (default ${DEFAULT-VALUE}).")
  double pausesPerDay;

  @Option(names = "--pause-median", paramLabel = "D", defaultValue = "500ms", converter = DurationConverter.class,
      description = "Median pause; pauses are lognormal (default ${DEFAULT-VALUE}).")
  Duration pauseMedian;

  @Option(names = "--sigma", paramLabel = "X", split = ",", defaultValue = "1.0,1.5",
      description = "Standard deviations of the pauses' logarithm, comma-separated; larger is heavier-tailed"
          + " (default ${DEFAULT-VALUE}).")
  List<Double> sigmas;

  @Option(names = "--leader-changes-per-day", paramLabel = "X", defaultValue = "0",
      description = "Muster's model: etcd leader changes per day; each resets every lease to TTL + 1s from then, as"
          + " etcd's Promote does (default ${DEFAULT-VALUE}).")
  double leaderChangesPerDay;

  @Option(names = "--seed", paramLabel = "N", defaultValue = "7",
      description = "Seed of every random stream; the same seed prints the same figures (default ${DEFAULT-VALUE}).")
  long seed;

  @Option(names = "--samples", paramLabel = "N", defaultValue = "2000000",
      description = "Pause samples per row, the seed's count (default ${DEFAULT-VALUE}).")
  int samples;

  @Option(names = "--delay-samples", paramLabel = "N", defaultValue = "100000",
      description = "Detection-delay samples per TTL, the seed's count (default ${DEFAULT-VALUE}).")
  int delaySamples;

  @Option(names = "--csv", paramLabel = "FILE",
      description = "Also write the rows to FILE as CSV (with --validate: one row per pause).")
  Path csv;

  @Option(names = "--validate",
      description = "Instead of the table, check Muster's model against real providers paused with SIGSTOP.")
  boolean validate;

  @Option(names = "--validate-providers", paramLabel = "N", defaultValue = "20",
      description = "--validate: provider processes (default ${DEFAULT-VALUE}).")
  int validateProviders;

  @Option(names = "--validate-rounds", paramLabel = "N", defaultValue = "2",
      description = "--validate: pauses per provider, one after another (default ${DEFAULT-VALUE}).")
  int validateRounds;

  @Option(names = "--validate-ttl", paramLabel = "D", defaultValue = "3s", converter = DurationConverter.class,
      description = "--validate: the providers' lease TTL, whole seconds; keepalive TTL/3 (default ${DEFAULT-VALUE}).")
  Duration validateTtl;

  @Option(names = "--validate-pause-median", paramLabel = "D", converter = DurationConverter.class,
      description = "--validate: median pause (default 0.8 x --validate-ttl, so that about half the pauses outlast"
          + " the lease's remainder).")
  Duration validatePauseMedian;

  @Option(names = "--validate-sigma", paramLabel = "X", defaultValue = "1.0",
      description = "--validate: sigma of the pauses (default ${DEFAULT-VALUE}).")
  double validateSigma;

  @Option(names = "--out", paramLabel = "DIR", defaultValue = "sim-ttl-out",
      description = "--validate: where the processes' logs go (default ${DEFAULT-VALUE}).")
  Path out;

  @Override
  public Integer call() {
    PrintWriter o = spec.commandLine().getOut();
    if (validate) {
      return validate(o);
    }
    TtlSimConfig config = TtlSimConfig.builder().heartbeat(heartbeat).keepalive(keepalive).ttls(ttls)
        .instances(instances).pausesPerDay(pausesPerDay).pauseMedian(pauseMedian).sigmas(sigmas)
        .leaderChangesPerDay(leaderChangesPerDay).seed(seed).samples(samples).delaySamples(delaySamples).build();
    TtlReport report = TtlSim.run(config);
    o.print(TtlTable.text(report));
    writeCsv(o, TtlTable.csv(report));
    o.flush();
    return 0;
  }

  private int validate(PrintWriter o) {
    ValidationConfig config = ValidationConfig.builder().providers(validateProviders).rounds(validateRounds)
        .ttl(validateTtl).pauseMedian(validatePauseMedian).sigma(validateSigma).seed(seed).build();
    o.println(config.describe());
    o.flush();
    ValidationReport report = TtlValidation.run(config, out, LabCommand.musterCommand(), o);
    o.print(report.text());
    writeCsv(o, report.csv());
    o.flush();
    return report.contradictions().isEmpty() ? 0 : Errors.FAILURE;
  }

  private void writeCsv(PrintWriter o, String rows) {
    if (csv == null) {
      return;
    }
    try {
      Path parent = csv.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(csv, rows, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new Errors.UsageException("cannot write --csv " + csv + ": " + e.getMessage());
    }
    o.println("wrote " + csv);
  }
}
