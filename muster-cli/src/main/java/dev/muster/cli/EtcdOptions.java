package dev.muster.cli;

import dev.muster.Durations;
import dev.muster.etcd.EtcdConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Option;

/**
 * How a command reaches etcd (SPEC §7): where etcd is, how to reach it (TLS files, an etcd user), and
 * {@code --help}. {@link CommonOptions} adds the one namespace most commands work in; {@code muster dns}, which
 * serves several, takes these alone.
 * A picocli mixin; one instance per parsed command, confined to the thread that runs it. It brings its own
 * {@code --help} instead of picocli's standard help options because those also claim {@code --version}, which
 * {@code muster register} needs for the service version.
 */
class EtcdOptions {
  static final String ENDPOINTS_ENV = "MUSTER_ENDPOINTS";

  @Option(names = "--endpoints", paramLabel = "URLS",
      description = "Comma-separated etcd client URLs, e.g. http://127.0.0.1:2379,http://127.0.0.1:2389"
          + " (https:// for TLS: see --cacert, --cert, --key)"
          + " (default: $" + ENDPOINTS_ENV + ", else " + EtcdConfig.DEFAULT_ENDPOINT + ").")
  String endpoints;

  @Option(names = "--cacert", paramLabel = "FILE",
      description = "CA bundle (PEM) that signs etcd's certificate, for https:// endpoints (default: $MUSTER_CACERT,"
          + " else the JVM's trusted CAs).")
  Path cacert;

  @Option(names = "--cert", paramLabel = "FILE",
      description = "Client certificate (PEM) for mutual TLS, with --key (default: $MUSTER_CERT).")
  Path cert;

  @Option(names = "--key", paramLabel = "FILE",
      description = "The client certificate's private key (PEM, PKCS#8) (default: $MUSTER_KEY).")
  Path key;

  @Option(names = "--authority", paramLabel = "NAME",
      description = "Check etcd's certificate against this name instead of the endpoint's host"
          + " (default: $MUSTER_AUTHORITY).")
  String authority;

  @Option(names = "--user", paramLabel = "NAME",
      description = "etcd user to authenticate as, with --password-file (default: $MUSTER_USER). Under"
          + " client-certificate auth the certificate's CN is the user and no password is needed.")
  String user;

  @Option(names = "--password-file", paramLabel = "FILE",
      description = "File whose first line is the --user's password (default: $MUSTER_PASSWORD_FILE). There is no"
          + " password flag: a password on the command line shows in ps and in shell history.")
  Path passwordFile;

  @Option(names = "--insecure-credentials",
      description = "Send --user's password over http:// endpoints that are not all loopback (127.0.0.0/8, ::1,"
          + " localhost), where anyone on the path can read it (default: refused; $MUSTER_INSECURE_CREDENTIALS=true)."
          + " Use https:// endpoints instead.")
  boolean insecureCredentials;

  @Option(names = "--request-timeout", paramLabel = "D", converter = DurationConverter.class,
      description = "Deadline of each etcd call the command makes itself (a registration's and a cache's loops keep"
          + " their own), connecting, the TLS handshake and authentication included (default:"
          + " $MUSTER_REQUEST_TIMEOUT, else 5s, etcdctl's command timeout: a command's first call pays the connection,"
          + " the TLS handshake and the password check).")
  Duration requestTimeout;

  /**
   * The CLI's default request timeout. The library's is 2 s, for a process whose connection is up; a command starts
   * cold, and on a loaded 2-core machine its first call over TLS with a password once took longer than 2 s.
   */
  static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

  @Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help and exit.")
  boolean help;

  /** The etcd configuration; throws {@link dev.muster.InvalidInputException} (exit 2) for a malformed URL. */
  EtcdConfig etcdConfig() {
    return etcdConfig(System::getenv);
  }

  /** As {@link #etcdConfig()}, reading the environment through {@code env} (tests pass a map). */
  EtcdConfig etcdConfig(UnaryOperator<String> env) {
    EtcdConfig.Builder b = EtcdConfig.builder().endpoints(endpoints(endpoints, env.apply(ENDPOINTS_ENV)));
    Path ca = file(cacert, env.apply("MUSTER_CACERT"));
    Path certificate = file(cert, env.apply("MUSTER_CERT"));
    Path privateKey = file(key, env.apply("MUSTER_KEY"));
    if (ca != null || certificate != null || privateKey != null) {
      b.tls(ca, certificate, privateKey);
    }
    String name = authority != null ? authority : blankToNull(env.apply("MUSTER_AUTHORITY"));
    if (name != null) {
      b.authority(name);
    }
    String etcdUser = user != null ? user : blankToNull(env.apply("MUSTER_USER"));
    Path secret = file(passwordFile, env.apply("MUSTER_PASSWORD_FILE"));
    if (etcdUser != null && secret == null) {
      throw new Errors.UsageException("--user " + etcdUser + " needs --password-file FILE (or $MUSTER_PASSWORD_FILE)"
          + " holding its password");
    }
    if (secret != null && etcdUser == null) {
      throw new Errors.UsageException("--password-file needs --user NAME (or $MUSTER_USER): whose password is it?");
    }
    if (etcdUser != null) {
      b.credentials(etcdUser, secret);
    }
    String insecure = blankToNull(env.apply("MUSTER_INSECURE_CREDENTIALS"));
    if (insecure != null && !insecure.equalsIgnoreCase("true") && !insecure.equalsIgnoreCase("false")) {
      throw new Errors.UsageException("MUSTER_INSECURE_CREDENTIALS=" + insecure + ": use true or false");
    }
    b.allowInsecureCredentials(insecureCredentials || Boolean.parseBoolean(insecure));
    b.requestTimeout(duration(requestTimeout, "MUSTER_REQUEST_TIMEOUT", env, DEFAULT_REQUEST_TIMEOUT));
    return b.build();
  }

  /**
   * The flag if given, else the environment variable {@code name} if set and not blank (a malformed one is an
   * {@link dev.muster.InvalidInputException} naming it), else {@code fallback}.
   */
  static Duration duration(Duration flag, String name, UnaryOperator<String> env, Duration fallback) {
    if (flag != null) {
      return flag;
    }
    String fromEnv = blankToNull(env.apply(name));
    return fromEnv == null ? fallback : Durations.parse(name, fromEnv);
  }

  private static Path file(Path flag, String env) {
    return flag != null ? flag : blankToNull(env) == null ? null : Path.of(env);
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s;
  }

  /** The flag if given, else the environment variable if set and not blank, else the default endpoint. */
  static String endpoints(String flag, String env) {
    if (flag != null) {
      return flag;
    }
    return env != null && !env.isBlank() ? env : EtcdConfig.DEFAULT_ENDPOINT;
  }
}
