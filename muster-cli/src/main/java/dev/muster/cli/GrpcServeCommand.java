package dev.muster.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.grpc.MusterGrpcServer;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.RegistrationEvent;
import dev.muster.sign.SigningKey;
import io.grpc.Server;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.util.MutableHandlerRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster grpc-serve}: a demo gRPC provider, the {@code muster.echo.Echo} service and {@code grpc.health.v1}
 * on {@code --address:--port}, registered and drained by {@link MusterGrpcServer}. Prints the registration's events
 * as {@code muster register} does, plus one {@code serving} line with the bound port once it is registered. SIGTERM
 * or SIGINT runs the server's stop sequence (health NOT_SERVING, DRAINING, drain, GOAWAY, in-flight calls,
 * revoke); the process then exits 0, or 1 when the lease could not be revoked.
 *
 * <p>The server is bound before it is registered so that the default id can name the bound port ({@code --port 0}
 * picks a free one); the Echo service is added then, through a fallback handler registry, because it answers with
 * that id. Events are printed on the registration's thread; the main thread only waits.
 */
@Command(
    name = "grpc-serve",
    description = {
        "Serve the demo gRPC service Echo with health, registered until SIGTERM/SIGINT, then drain and revoke.",
        "On SIGTERM: health NOT_SERVING, DRAINING, the drain, GOAWAY, calls in flight finish, revoke. Prints one JSON"
            + " line per event, as register does, and a serving line with the bound port."})
final class GrpcServeCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Mixin
  InstanceOptions provider;

  @Option(names = "--service", required = true, paramLabel = "NAME", description = "Service name.")
  String service;

  @Option(names = "--address", paramLabel = "HOST", defaultValue = "127.0.0.1",
      description = "Where to listen, and the host callers are told to dial (default ${DEFAULT-VALUE}).")
  String address;

  @Option(names = "--port", paramLabel = "PORT", defaultValue = "0",
      description = "Port to listen on; 0 picks a free one, printed in the serving line (default ${DEFAULT-VALUE}).")
  int port;

  @Option(names = "--json", description = "One JSON object per event and line. Always on, as for register.")
  boolean json;

  @Option(names = "--id", paramLabel = "ID", description = "Instance id (default: HOST-PORT-6 random hex, with the"
      + " bound port); Echo replies carry it as served_by.")
  String id;

  @Option(names = "--drain", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long to stay DRAINING, health NOT_SERVING, before GOAWAY on SIGTERM (default 2 x keepalive;"
          + " 0s sends GOAWAY at once without publishing DRAINING).")
  Duration drain;

  @Option(names = "--shutdown-deadline", paramLabel = "DURATION", defaultValue = "10s",
      converter = DurationConverter.class,
      description = "How long calls in flight at GOAWAY may run before they are cancelled (default ${DEFAULT-VALUE}).")
  Duration shutdownDeadline;

  @Option(names = "--sign-key", paramLabel = "FILE",
      description = "Sign the instance record with this Ed25519 private key (PEM), as register --sign-key. Default:"
          + " unsigned.")
  Path signKey;

  @Option(names = "--start-not-ready", description = "Register as STARTING (in every cache, picked by none) and stay"
      + " so until the process gets SIGUSR1 (SIGUSR2 puts it back to STARTING).")
  boolean startNotReady;

  @Option(names = "--health-fault-file", paramLabel = "FILE", hidden = true,
      description = "Read FILE every 100 ms: while its first word is NOT_SERVING, gRPC health answers NOT_SERVING"
          + " for every service (the server still serves calls and keeps its lease). For the conformance suite's"
          + " probe scenario.")
  Path healthFaultFile;

  private final AtomicBoolean revoked = new AtomicBoolean(); // set on the registration's thread

  @Override
  public Integer call() throws InterruptedException {
    if (port < 0 || port > 65_535) {
      throw new dev.muster.InvalidInputException("--port", port, "use 1-65535, or 0 for any free port");
    }
    SigningKey signingKey = signKey == null ? null : SigningKey.read(signKey); // a bad file exits 2 before etcd
    RegistrarConfig config = provider.registrar().drain(drain).shutdownHook(true).signingKey(signingKey).build();
    Instance template = instance(port == 0 ? 1 : port); // refuses a bad name, zone, weight or --meta before binding
    PrintWriter out = spec.commandLine().getOut();

    HealthStatusManager health = new HealthStatusManager();
    MutableHandlerRegistry handlers = new MutableHandlerRegistry();
    Server server;
    try {
      server = NettyServerBuilder.forAddress(new InetSocketAddress(address, port))
          .addService(health.getHealthService()).fallbackHandlerRegistry(handlers).build().start();
    } catch (IOException e) {
      spec.commandLine().getErr().println("muster: could not listen on " + address + ":" + port + ": "
          + e.getMessage() + " (choose another --port, or --port 0 for any free one)");
      return Errors.FAILURE;
    }
    Instance instance = id != null ? template.port(server.getPort())
        : instance(server.getPort()); // the generated id names the bound port
    handlers.addService(Echo.service(instance.id()));

    CompletableFuture<RegistrationEvent> failed = new CompletableFuture<>();
    // Before the registration starts: a script may signal as soon as it reads "registered" (ReadySignals says why).
    ReadySignals signals = startNotReady ? ReadySignals.install(out) : null;
    EtcdRegistry registry;
    MusterGrpcServer grpc;
    try {
      registry = EtcdRegistry.connect(common.etcdConfig());
    } catch (RuntimeException e) {
      server.shutdownNow();
      throw e;
    }
    try {
      MusterGrpcServer.Builder b = MusterGrpcServer.builder(registry, server).health(health).service(service)
          .address(address).id(instance.id()).namespace(common.namespace).version(provider.version)
          .zone(provider.zone).region(provider.region).weight(provider.weight).metadata(instance.metadata())
          .registrar(config)
          .shutdownDeadline(shutdownDeadline).startNotReady(startNotReady)
          .listener(event -> {
            JsonLines.print(out, EventLines.of(event, instance));
            if (event.type() == RegistrationEvent.Type.FAILED) {
              failed.complete(event);
            } else if (event.type() == RegistrationEvent.Type.REVOKED) {
              revoked.set(true);
            }
          });
      instance.tags().forEach(b::tag);
      grpc = b.build().start();
    } catch (RuntimeException e) {
      server.shutdownNow();
      registry.close();
      throw e;
    }
    MusterGrpcServer started = grpc;
    ObjectNode serving = JsonLines.event("serving", Instant.now());
    serving.put("id", instance.id());
    serving.put("service", service);
    serving.put("address", address);
    serving.put("port", started.port());
    serving.put("health", "SERVING");
    JsonLines.print(out, serving);
    if (signals != null) {
      signals.registered(started.registration());
    }
    if (healthFaultFile != null) {
      HealthFault.start(healthFaultFile, health, started);
    }
    // SIGTERM is this provider's normal end: once the server's own hook has drained and revoked, exit 0 (1 if the
    // revoke failed) rather than the JVM's 143. halt, because System.exit cannot be called from a shutdown hook.
    Duration limit = config.drain().plus(shutdownDeadline).plus(config.requestTimeout().multipliedBy(4))
        .plusSeconds(15);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        started.terminated().get(limit.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt(); // halt with a failure below
      } catch (ExecutionException | TimeoutException e) {
        // halt with a failure below
      }
      out.flush();
      Runtime.getRuntime().halt(exitStatus(started));
    }, "muster-grpc-serve-exit"));

    try {
      CompletableFuture.anyOf(started.terminated(), failed).get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the gRPC server's stop sequence failed", e.getCause());
    }
    if (failed.isDone() && !started.terminated().isDone()) {
      spec.commandLine().getErr().println("muster: registration of " + instance.key().path() + " failed: "
          + failed.getNow(null).detail());
      started.close();
      registry.close();
      return Errors.FAILURE;
    }
    started.terminated().join();
    registry.close();
    return exitStatus(started);
  }

  /** 0 once the server has stopped and the lease was revoked; 1 if it was not (the key expires with the lease). */
  private int exitStatus(MusterGrpcServer server) {
    return server.terminated().isDone() && revoked.get() ? 0 : Errors.FAILURE;
  }

  Instance instance(int boundPort) {
    Instance instance = Instance.of(service, address, boundPort);
    if (id != null) {
      instance = instance.id(id);
    }
    return provider.describe(instance, common.namespace);
  }
}
