package dev.muster.cli;

import dev.muster.InvalidInputException;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Option;

/**
 * What a provider command says about its instance and its lease: {@code muster register}'s and
 * {@code muster grpc-serve}'s shared options (a picocli mixin). One instance per parsed command, confined to the
 * thread that runs it.
 */
final class InstanceOptions {
  @Option(names = "--version", paramLabel = "VERSION", defaultValue = Instance.DEFAULT_VERSION,
      description = "Service version (default ${DEFAULT-VALUE}).")
  String version;

  @Option(names = "--zone", paramLabel = "ZONE", description = "Zone, for zone-aware balancing.")
  String zone;

  @Option(names = "--region", paramLabel = "REGION", description = "Region.")
  String region;

  @Option(names = "--weight", paramLabel = "N", defaultValue = "" + Instance.DEFAULT_WEIGHT,
      description = "Balancing weight 0-" + Instance.MAX_WEIGHT + " (default ${DEFAULT-VALUE}).")
  int weight;

  @Option(names = "--tag", paramLabel = "TAG", description = "A tag; repeat for more.")
  List<String> tags = new ArrayList<>();

  @Option(names = "--meta", paramLabel = "KEY=VALUE", description = "A metadata entry; repeat for more.")
  List<String> meta = new ArrayList<>();

  @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "15s", converter = DurationConverter.class,
      description = "Lease TTL, whole seconds, at least 2s (default ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(names = "--keepalive", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "Time between keepalives (default TTL/3).")
  Duration keepalive;

  @Option(names = "--max-failures", paramLabel = "N", defaultValue = "0",
      description = "Exit 1 after N consecutive failed calls to etcd; 0 retries forever (default ${DEFAULT-VALUE}).")
  int maxFailures;

  @Option(names = "--signature-validity", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "With --sign-key: how long each signed record may be served; the provider signs it again when half"
          + " has passed, so a record whose lease someone else keeps alive stops being served this long after the"
          + " provider died. Whole seconds, at least 1m and 4 x TTL (default the larger of 10m and 4 x TTL).")
  Duration signatureValidity;

  @Option(names = "--sign-v1-too", description = "With --sign-key: also write Muster 0.1's signature, for consumers"
      + " not yet upgraded (it carries no sequence and no expiry: turn it off once they are).")
  boolean signV1Too;

  static final Duration DEFAULT_START_TIMEOUT = Duration.ofSeconds(10);

  @Option(names = "--start-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long to keep trying to reach etcd at start before exiting 4 (default: $MUSTER_START_TIMEOUT,"
          + " else 10s).")
  Duration startTimeout;

  /**
   * A registrar configuration with these options' TTL, keepalive, failure limit, start timeout and signature
   * validity (the command sets the signing key).
   */
  RegistrarConfig.Builder registrar() {
    return registrar(System::getenv);
  }

  /** As {@link #registrar()}, reading the environment through {@code env} (tests pass a map). */
  RegistrarConfig.Builder registrar(UnaryOperator<String> env) {
    Duration start = EtcdOptions.duration(startTimeout, "MUSTER_START_TIMEOUT", env, DEFAULT_START_TIMEOUT);
    return RegistrarConfig.builder().ttl(ttl).keepaliveInterval(keepalive).maxFailures(maxFailures)
        .startTimeout(start).signatureValidity(signatureValidity).signV1Too(signV1Too);
  }

  /** {@code instance} in {@code namespace} with these options' version, zone, region, weight, tags, metadata. */
  Instance describe(Instance instance, String namespace) {
    return instance.namespace(namespace).version(version).zone(zone).region(region).weight(weight).tags(tags)
        .metadata(metadata(meta));
  }
  /** Parses repeated {@code --meta KEY=VALUE}; a key given twice is an error, not a silent overwrite. */
  static Map<String, String> metadata(List<String> entries) {
    Map<String, String> metadata = new TreeMap<>();
    for (String entry : entries) {
      int eq = entry.indexOf('=');
      if (eq < 0) {
        throw new InvalidInputException("--meta", entry, "write it as KEY=VALUE (the value may be empty)");
      }
      String key = entry.substring(0, eq);
      if (metadata.putIfAbsent(key, entry.substring(eq + 1)) != null) {
        throw InvalidInputException.withMessage("--meta", entry, "--meta key \"" + key + "\" is given twice: give"
            + " each key once");
      }
    }
    return metadata;
  }
}
