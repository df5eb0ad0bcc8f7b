package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.InvalidInputException;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.health.ProbeConfig;
import dev.muster.outlier.OutlierConfig;
import dev.muster.xds.XdsBootstrap;
import dev.muster.xds.XdsConfig;
import dev.muster.xds.XdsServer;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster xds}: an xDS control plane (ADS, state of the world) for proxyless gRPC in any language, fed from
 * live endpoint caches. Prints one {@code "event":"serving"} JSON line once it listens, then runs until
 * Ctrl-C/SIGTERM. {@code muster xds bootstrap} prints the JSON a client's {@code GRPC_XDS_BOOTSTRAP_CONFIG} takes.
 */
@Command(name = "xds", subcommands = XdsCommand.Bootstrap.class,
    description = "Serve xDS (LDS, RDS, CDS, EDS over ADS) from live caches, so a gRPC channel xds:///SERVICE in any"
        + " language discovers and balances the registry's services: zone → locality and priority, weight → locality"
        + " weight, DRAINING → DRAINING, a failed probe → UNHEALTHY, ejection → outlier detection. While etcd is"
        + " unreachable the last assignment stays served. Clients: GRPC_XDS_BOOTSTRAP_CONFIG=$(muster xds bootstrap"
        + " --server 127.0.0.1:18000).")
final class XdsCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  EtcdOptions etcd;

  @Mixin
  TrustKeyOptions trust;

  @Mixin
  ProbeOptions probes;

  @Option(names = "--listen", paramLabel = "IP:PORT", defaultValue = "127.0.0.1:18000",
      description = "Where the ADS server listens; an IP literal, port 0 picks a free one (default ${DEFAULT-VALUE}).")
  String listen;

  @Option(names = "--namespace", paramLabel = "NS", defaultValue = "default",
      description = "The namespace whose services are served (default ${DEFAULT-VALUE}).")
  String namespace;

  @Option(names = "--zone-priorities", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Send a client whose bootstrap names its zone (muster xds bootstrap --zone) its zone's instances"
          + " as priority 0 and the others as priority 1, so it fails over only when its zone has none it can use"
          + " (default ${DEFAULT-VALUE}; --no-zone-priorities: one priority).")
  boolean zonePriorities;

  @Option(names = "--failure-percentage", paramLabel = "PERCENT", defaultValue = "50",
      description = "gRPC clients eject an endpoint whose calls fail more than this share over 10 s (at least 10"
          + " calls, 2 or more endpoints): gRPC has no consecutive-failure ejection, Muster's default; 0 = off"
          + " (default ${DEFAULT-VALUE}). Envoy also gets Muster's consecutive-failure settings.")
  int failurePercentage;

  @Option(names = "--outlier-detection", negatable = true, defaultValue = "true", fallbackValue = "true",
      description = "Send each cluster Muster's ejection settings as outlier detection (default ${DEFAULT-VALUE};"
          + " --no-outlier-detection: none).")
  boolean outlierDetection;

  @Option(names = "--no-push", hidden = true,
      description = "Negative control for the lab: serve each service's first set and never push a change.")
  boolean noPush;

  @Option(names = "--empty-on-stale", hidden = true,
      description = "Negative control for the lab: push an empty assignment while a service's cache is stale.")
  boolean emptyOnStale;

  @Option(names = "--max-streams", paramLabel = "N", defaultValue = "20000",
      description = "ADS streams served at once; more are refused with RESOURCE_EXHAUSTED (default ${DEFAULT-VALUE}).")
  int maxStreams;

  @Option(names = "--max-names", paramLabel = "N", defaultValue = "1000",
      description = "Resource names one request of a stream may carry; a stream that asks for more is ended with"
          + " RESOURCE_EXHAUSTED naming this limit (default ${DEFAULT-VALUE}).")
  int maxNames;

  @Option(names = "--max-services", paramLabel = "N", defaultValue = "10000",
      description = "Services followed at once (each holds one etcd watch); a stream whose request would open one"
          + " more is ended with RESOURCE_EXHAUSTED naming this limit (default ${DEFAULT-VALUE}).")
  int maxServices;

  @Override
  public Integer call() throws InterruptedException {
    XdsConfig config;
    try {
      ProbeConfig pc = probes.probeConfig();
      config = XdsConfig.builder().listen(HostPort.listenAddress(listen, "18000")).namespace(namespace)
          .zonePriorities(zonePriorities).failurePercentage(failurePercentage)
          .outlier(OutlierConfig.defaults().toBuilder().enabled(outlierDetection).build())
          .probe(pc, pc == null ? null : probes.probeFactory(pc)).trustedKeys(trust.keys()).maxStreams(maxStreams)
          .maxNames(maxNames).maxServices(maxServices).build();
    } catch (InvalidInputException e) {
      throw new Errors.UsageException(flag(e.getMessage()) + e.getMessage());
    }
    if (noPush) {
      System.setProperty("muster.xds.negativeControl.noPush", "true"); // read once, when the server's feeds load
    }
    if (emptyOnStale) {
      System.setProperty("muster.xds.negativeControl.emptyOnStale", "true");
    }
    EtcdRegistry registry = EtcdRegistry.connect(etcd.etcdConfig());
    XdsServer server;
    try {
      server = XdsServer.start(registry, config);
    } catch (UncheckedIOException e) {
      registry.close();
      throw new Errors.UsageException(e.getMessage() + ": is another server on that port? pick another --listen");
    }
    StopOnSignal stop = StopOnSignal.install("muster-xds-stop", server::close, registry::close);
    PrintWriter out = spec.commandLine().getOut();
    ObjectNode line = JsonLines.event("serving", Instant.now());
    InetSocketAddress bound = server.address();
    line.put("address", bound.getAddress().getHostAddress());
    line.put("port", bound.getPort());
    line.put("namespace", namespace);
    JsonLines.print(out, line);
    stop.await();
    return 0;
  }

  private static String flag(String message) {
    if (message.contains("failurePercentage")) {
      return "--failure-percentage: ";
    }
    if (message.contains("maxStreams")) {
      return "--max-streams: ";
    }
    if (message.contains("maxNames")) {
      return "--max-names: ";
    }
    if (message.contains("maxServices")) {
      return "--max-services: ";
    }
    if (message.contains("namespace")) {
      return "--namespace: ";
    }
    return "";
  }

  /** {@code muster xds bootstrap}: the JSON a gRPC client reads, for one environment variable. */
  @Command(name = "bootstrap", mixinStandardHelpOptions = true,
      description = "Print the xDS bootstrap JSON a gRPC client reads: export"
      + " GRPC_XDS_BOOTSTRAP_CONFIG=\"$(muster xds bootstrap --server 127.0.0.1:18000)\", or write it to a file and"
      + " name it in GRPC_XDS_BOOTSTRAP.")
  static final class Bootstrap implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--server", paramLabel = "HOST:PORT", required = true,
        description = "Where muster xds listens, as the client reaches it.")
    String server;

    @Option(names = "--node-id", paramLabel = "ID",
        description = "The client's node id, as the server logs it (default: muster- and a random UUID).")
    String nodeId;

    @Option(names = "--zone", paramLabel = "Z",
        description = "The client's zone: its zone's instances come first (default: none, no preference).")
    String zone;

    @Option(names = "--region", paramLabel = "R", description = "The client's region (default: none).")
    String region;

    @Override
    public Integer call() {
      XdsBootstrap b;
      try {
        b = XdsBootstrap.of(server);
        if (nodeId != null) {
          b = b.withNodeId(nodeId);
        }
        b = b.withZone(zone).withRegion(region);
      } catch (InvalidInputException e) {
        String field = e.getMessage().startsWith("nodeId") ? "--node-id" : e.getMessage().startsWith("zone")
            ? "--zone" : e.getMessage().startsWith("region") ? "--region" : "--server";
        throw new Errors.UsageException(field + ": " + e.getMessage());
      }
      spec.commandLine().getOut().println(b.toJson());
      spec.commandLine().getOut().flush();
      return 0;
    }
  }
}
