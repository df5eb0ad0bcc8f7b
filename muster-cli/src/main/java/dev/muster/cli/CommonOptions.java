package dev.muster.cli;

import dev.muster.etcd.EtcdConfig;
import picocli.CommandLine.Option;

/**
 * The options every registry command takes (SPEC §7): where etcd is, which namespace to use, and {@code --help}.
 * A picocli mixin; one instance per parsed command, confined to the thread that runs it. It brings its own
 * {@code --help} instead of picocli's standard help options because those also claim {@code --version}, which
 * {@code muster register} needs for the service version.
 */
final class CommonOptions {
  static final String ENDPOINTS_ENV = "MUSTER_ENDPOINTS";

  @Option(names = "--endpoints", paramLabel = "URLS",
      description = "Comma-separated etcd client URLs, e.g. http://127.0.0.1:2379,http://127.0.0.1:2389"
          + " (default: $" + ENDPOINTS_ENV + ", else " + EtcdConfig.DEFAULT_ENDPOINT + ").")
  String endpoints;

  @Option(names = "--namespace", paramLabel = "NAME", defaultValue = "default",
      description = "Registry namespace (default ${DEFAULT-VALUE}).")
  String namespace;

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  /** The etcd configuration; throws {@link dev.muster.InvalidInputException} (exit 2) for a malformed URL. */
  EtcdConfig etcdConfig() {
    return EtcdConfig.of(endpoints(endpoints, System.getenv(ENDPOINTS_ENV)));
  }

  /** The flag if given, else the environment variable if set and not blank, else the default endpoint. */
  static String endpoints(String flag, String env) {
    if (flag != null) {
      return flag;
    }
    return env != null && !env.isBlank() ? env : EtcdConfig.DEFAULT_ENDPOINT;
  }
}
