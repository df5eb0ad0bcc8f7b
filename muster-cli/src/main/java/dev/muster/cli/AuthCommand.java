package dev.muster.cli;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code muster auth}: etcd users and roles for Muster's key layout, as etcd's root ({@link EtcdAuth}). Each
 * subcommand is idempotent and prints one line per change it made, or "nothing to change".
 */
@Command(
    name = "auth",
    description = "Set up etcd authentication and per-service roles (run as etcd's root: --user root"
        + " --password-file FILE, or a client certificate whose CN is root).",
    subcommands = {AuthCommand.Enable.class, AuthCommand.AddUser.class, AuthCommand.GrantProvider.class,
        AuthCommand.GrantConsumer.class, AuthCommand.GrantAdmin.class, AuthCommand.Ls.class})
final class AuthCommand implements Runnable {
  @Spec
  CommandSpec spec;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** What every subcommand has: its spec (for output) and the registry options (as root). */
  abstract static class Subcommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    /** Connects with the common options, runs {@code change} and prints its changes. */
    int apply(Function<EtcdAuth, List<EtcdAuth.Change>> change) {
      return AuthCommand.apply(spec, common.etcdConfig(), change);
    }
  }

  /** Connects with {@code config}, runs {@code change} and prints its changes. */
  static int apply(CommandSpec spec, EtcdConfig config, Function<EtcdAuth, List<EtcdAuth.Change>> change) {
    List<EtcdAuth.Change> changes;
    try (EtcdAuth auth = EtcdAuth.connect(config)) {
      changes = change.apply(auth);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (changes.isEmpty()) {
      out.println("nothing to change");
    }
    changes.forEach(out::println);
    out.flush();
    return 0;
  }

  @Command(name = "enable", description = "Create user root if missing (with --password-file's password), give it"
      + " role root, and turn etcd authentication on.")
  static final class Enable extends Subcommand {
    @Override
    public Integer call() {
      return apply(EtcdAuth::enable);
    }
  }

  @Command(name = "add-user", description = "Create etcd user USER with the password on the first line of"
      + " --new-password-file (no change if USER exists).")
  static final class AddUser extends Subcommand {
    @Parameters(index = "0", paramLabel = "USER", description = "The user to create.")
    String user;

    @Option(names = "--new-password-file", paramLabel = "FILE", required = true,
        description = "File whose first line is the new user's password.")
    Path newPasswordFile;

    @Override
    public Integer call() {
      String password = EtcdConfig.Credentials.fromPasswordFile(user, newPasswordFile).password();
      return apply(auth -> auth.addUser(user, password));
    }
  }

  @Command(name = "grant-provider", description = "Let USER register SERVICE: readwrite on the service's prefix,"
      + " or with --instance on that one instance key only (it cannot touch other providers' records).")
  static final class GrantProvider extends Subcommand {
    @Parameters(index = "0", paramLabel = "SERVICE", description = "The service.")
    String service;

    @Parameters(index = "1", paramLabel = "USER", description = "The etcd user (it must exist).")
    String user;

    @Option(names = "--instance", paramLabel = "ID", description = "Grant write on this instance id's key only.")
    String instance;

    @Option(names = "--version", paramLabel = "V", defaultValue = Instance.DEFAULT_VERSION,
        description = "The instance's version, with --instance (default ${DEFAULT-VALUE}).")
    String version;

    @Override
    public Integer call() {
      InstanceKey key = instance == null ? null : new InstanceKey(common.namespace, service, version, instance);
      return apply(auth -> auth.grantProvider(common.namespace, service, user, key));
    }
  }

  @Command(name = "grant-consumer", description = "Let USER watch and list SERVICE (read on its prefix); SERVICE"
      + " '*' grants the whole namespace.")
  static final class GrantConsumer extends Subcommand {
    @Parameters(index = "0", paramLabel = "SERVICE", description = "The service, or '*' for every service of the"
        + " namespace.")
    String service;

    @Parameters(index = "1", paramLabel = "USER", description = "The etcd user (it must exist).")
    String user;

    @Override
    public Integer call() {
      String which = "*".equals(service) ? null : service;
      return apply(auth -> auth.grantConsumer(common.namespace, which, user));
    }
  }

  @Command(name = "grant-admin", description = "Let USER read and write everything under Muster's root.")
  static final class GrantAdmin extends Subcommand {
    @Parameters(index = "0", paramLabel = "USER", description = "The etcd user (it must exist).")
    String user;

    @Override
    public Integer call() {
      return apply(auth -> auth.grantAdmin(user));
    }
  }

  @Command(name = "ls", description = "Show whether authentication is on, the users with their roles, and the"
      + " roles with their permissions.")
  static final class Ls extends Subcommand {
    @Override
    public Integer call() {
      EtcdAuth.Listing listing;
      try (EtcdAuth auth = EtcdAuth.connect(common.etcdConfig())) {
        listing = auth.list();
      }
      PrintWriter out = spec.commandLine().getOut();
      out.println("authentication " + (listing.authEnabled() ? "enabled" : "disabled"));
      for (EtcdAuth.User u : listing.users()) {
        out.println("user " + u.name() + ": " + (u.roles().isEmpty() ? "(no roles)" : String.join(", ", u.roles())));
      }
      for (EtcdAuth.Role r : listing.roles()) {
        out.println("role " + r.name() + ": " + (r.permissions().isEmpty() ? "(no permissions)"
            : String.join("; ", r.permissions())));
      }
      out.flush();
      return 0;
    }
  }
}
