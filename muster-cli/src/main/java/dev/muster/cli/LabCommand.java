package dev.muster.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code muster lab}: the fault lab. Not built yet; says so plainly instead of pretending. */
@Command(
    name = "lab",
    mixinStandardHelpOptions = true,
    description = "Run the fault lab on private etcd processes and print the evidence table (not built yet).")
final class LabCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().getErr().println("muster: the fault lab is not built yet (it is the project's issue #6)."
        + " Meanwhile './muster test' runs the launcher's fault tests against real etcd.");
    return 1;
  }
}
