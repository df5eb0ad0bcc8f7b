package dev.muster.cli;

import dev.muster.MusterException;
import dev.muster.testing.EtcdLaunchException;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** Turns bad usage and failures into one line on stderr and an exit code (SPEC §7). */
final class Errors {
  static final int USAGE = 2;
  static final int FAILURE = 1;

  private Errors() {}

  static int onBadUsage(ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    String message = e.getMessage();
    if (!message.endsWith(".")) {
      message = message + ".";
    }
    cmd.getErr().println("muster: " + message + " Run '" + cmd.getCommandSpec().qualifiedName()
        + " --help' for usage.");
    return USAGE;
  }

  static int onFailure(Exception e, CommandLine cmd, CommandLine.ParseResult parsed) {
    int code = FAILURE;
    String message;
    if (e instanceof MusterException me) {
      code = me.code().exitCode();
      message = me.getMessage();
    } else if (e instanceof UsageException ue) {
      code = USAGE;
      message = ue.getMessage();
    } else if (e instanceof EtcdLaunchException le) {
      message = le.getMessage();
    } else {
      message = e.getClass().getSimpleName() + ": " + e.getMessage()
          + " (this is a bug in muster; rerun with MUSTER_DEBUG=1 for details)";
    }
    cmd.getErr().println("muster: " + message);
    if (System.getenv("MUSTER_DEBUG") != null) {
      e.printStackTrace(cmd.getErr());
    }
    return code;
  }

  /** A value that parsed but makes no sense (e.g. {@code --members 2}); exit 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
