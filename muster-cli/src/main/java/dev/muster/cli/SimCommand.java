package dev.muster.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code muster sim}: models that need no etcd (so far {@code ttl}); prints its usage when run alone. */
@Command(
    name = "sim",
    mixinStandardHelpOptions = true,
    description = "Simulations of Muster's trade-offs, on seeded streams (no etcd needed).",
    subcommands = {SimTtlCommand.class})
final class SimCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
