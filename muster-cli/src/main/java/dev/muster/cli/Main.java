package dev.muster.cli;

import java.io.PrintWriter;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code muster}: the command line. Every error reaches the user as one line on stderr saying what was wrong
 * and what to do, with the exit codes of SPEC §7: 0 ok, 2 bad usage or input, 3 duplicate instance id,
 * 4 registry unreachable at start, 5 etcd refused the credentials or the permission, 1 anything else. Set {@code MUSTER_DEBUG=1} to also see stack traces.
 */
@Command(
    name = "muster",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Service discovery for Java on etcd.",
    subcommands = {RegisterCommand.class, LsCommand.class, WatchCommand.class, CallCommand.class, EtcdCommand.class,
        GrpcServeCommand.class, GrpcCallCommand.class, DnsCommand.class, XdsCommand.class, ConsoleCommand.class, DoctorCommand.class,
        AuthCommand.class, KeygenCommand.class, LabCommand.class, ChaosCommand.class, SimCommand.class,
        SnapshotCommand.class,
        CommandLine.HelpCommand.class},
    usageHelpAutoWidth = true,
    footer = {"", "Also: ./muster test (the whole test suite) and ./muster bench [--quick] (benchmarks against raw"
        + " jetcd and Curator; ./muster bench --help)."})
public final class Main implements Runnable {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
  }

  /** Runs the command line with the given streams and returns the exit code (for tests). */
  public static int run(String[] args, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new Main());
    cli.setOut(out);
    cli.setErr(err);
    cli.setParameterExceptionHandler(Errors::onBadUsage);
    cli.setExecutionExceptionHandler(Errors::onFailure);
    return cli.execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The version from the jar's manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"muster " + (v == null ? "dev" : v)};
    }
  }
}
