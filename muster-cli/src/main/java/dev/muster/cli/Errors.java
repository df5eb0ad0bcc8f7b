package dev.muster.cli;

import dev.muster.ErrorCode;
import dev.muster.MusterException;
import dev.muster.lab.LabException;
import dev.muster.testing.EtcdLaunchException;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/**
 * Turns bad usage and failures into one line on stderr and an exit code (SPEC §7: 0 ok, 2 bad usage or input,
 * 3 duplicate instance id, 4 registry unreachable, 5 etcd refused the credentials or the permission, 1 anything
 * else). The library's messages speak of its own
 * configuration; this is where the command line adds what to do in its own words (flags, {@code ./muster etcd}).
 */
final class Errors {
  static final int USAGE = 2;
  static final int FAILURE = 1;
  static final int DUPLICATE = 3;
  static final int UNREACHABLE = 4;
  static final int REFUSED = 5;

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
      code = exitCode(me.code());
      message = me.getMessage() + advice(me.code());
    } else if (e instanceof UsageException ue) {
      code = USAGE;
      message = ue.getMessage();
    } else if (e instanceof EtcdLaunchException le) {
      message = le.getMessage();
    } else if (e instanceof LabException le) { // a real run went wrong (a process, a timeout): not a bug
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

  /** The command line's exit status for a library error. */
  static int exitCode(ErrorCode code) {
    return switch (code) {
      case INVALID_INPUT -> USAGE;
      case DUPLICATE_INSTANCE -> DUPLICATE;
      case REGISTRY_UNAVAILABLE -> UNREACHABLE;
      case AUTHENTICATION_FAILED, PERMISSION_DENIED -> REFUSED;
      case NO_ENDPOINT, LEASE_LOST, INTERNAL -> FAILURE;
    };
  }

  /** What a command-line user can do about a library error, in the command line's terms; empty if nothing. */
  static String advice(ErrorCode code) {
    return switch (code) {
      case REGISTRY_UNAVAILABLE -> " (start etcd with ./muster etcd, or check --endpoints / MUSTER_ENDPOINTS)";
      case DUPLICATE_INSTANCE -> " (--id sets the instance id)";
      case AUTHENTICATION_FAILED -> " (check --user and --password-file, or --cert, --key and --cacert)";
      case PERMISSION_DENIED -> " (etcd's root can grant it: muster auth grant-provider SERVICE USER, or"
          + " grant-consumer; muster auth ls shows the grants)";
      default -> "";
    };
  }

  /** A value that parsed but makes no sense (e.g. {@code --members 2}); exit 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
