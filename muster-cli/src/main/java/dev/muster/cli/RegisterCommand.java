package dev.muster.cli;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.RegistrationEvent;
import dev.muster.registry.RegistrationState;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.sign.SigningKey;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code muster register}: registers one instance and keeps its lease alive in the foreground, printing every
 * registration event as a JSON line (SPEC §3, §7). SIGTERM or SIGINT runs the registrar's shutdown hook, which
 * publishes DRAINING, waits the drain period and revokes the lease; the process then exits (143 or 130).
 *
 * <p>Everything is validated before etcd is contacted, so bad input exits 2 at once. The main thread only waits:
 * events are printed on the registrar's thread (and, on shutdown, the hook's).
 */
@Command(
    name = "register",
    description = {
        "Register an instance under a lease and keep it alive until SIGTERM/SIGINT, then drain and revoke.",
        "Prints one JSON line per event (registered, unreachable, reconnected, lease_lost, reregistered, draining,"
            + " revoked, failed)."})
final class RegisterCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Mixin
  CommonOptions common;

  @Mixin
  InstanceOptions provider;

  @Option(names = "--service", required = true, paramLabel = "NAME", description = "Service name.")
  String service;

  @Option(names = "--address", required = true, paramLabel = "HOST:PORT",
      description = "Where callers reach the instance, e.g. 10.0.0.7:8080 or [fd00::7]:8080.")
  String address;

  @Option(names = "--json", description = "One JSON object per event and line. Always on: register prints only JSON"
      + " lines; accepted, like every command that prints events, so scripts can pass it everywhere.")
  boolean json;

  @Option(names = "--id", paramLabel = "ID", description = "Instance id (default: HOST-PORT-6 random hex).")
  String id;

  @Option(names = "--drain", paramLabel = "DURATION", converter = DurationConverter.class,
      description = "How long to stay DRAINING before revoking on SIGTERM (default 2 x keepalive; 0s revokes at"
          + " once without publishing DRAINING).")
  Duration drain;

  @Option(names = "--no-reregister", hidden = true, description = "On lease loss keep renewing the dead lease"
      + " instead of registering again (the lab's negative control; not a production option).")
  boolean noReregister;

  @Option(names = "--sign-key", paramLabel = "FILE",
      description = "Sign the instance record with this Ed25519 private key (PEM, e.g. NAME.key from muster keygen),"
          + " for its key and lease, so that consumers with --trust-key NAME.pub serve it and exclude forgeries."
          + " Default: unsigned.")
  Path signKey;

  @Option(names = "--log-keepalives", hidden = true,
      description = "Also print a keepalive line for every renewal (the lab uses it to split stale windows).")
  boolean logKeepalives;

  @Option(names = "--serve-hello", description = "Also serve GET /hello on --address (a demo provider for the lab"
      + " and for trying `muster call`); it keeps serving through the drain and stops after the revoke.")
  boolean serveHello;

  @Option(names = "--hello-delay", paramLabel = "DURATION", defaultValue = "0ms", converter = DurationConverter.class,
      description = "With --serve-hello: wait this long before answering each /hello, so requests are in flight"
          + " (the lab's drain scenario; default ${DEFAULT-VALUE}).")
  Duration helloDelay;

  @Option(names = "--hello-fault-file", paramLabel = "FILE", hidden = true,
      description = "With --serve-hello: read faults from FILE before each answer (503, hang, health-503; see"
          + " HelloServer). For the lab's health scenarios.")
  java.nio.file.Path helloFaultFile;

  @Option(names = "--start-not-ready", description = "Register as STARTING (in every cache, picked by none) and stay"
      + " so until --ready-url answers 2xx or the process gets SIGUSR1 (SIGUSR2 puts it back to STARTING).")
  boolean startNotReady;

  @Option(names = "--ready-url", paramLabel = "URL", description = "Register as STARTING, poll URL (GET, every 200"
      + " ms, 1 s timeout) and put UP at its first 2xx; prints a \"ready\" line. Implies --start-not-ready.")
  URI readyUrl;

  @Override
  public Integer call() throws InterruptedException {
    if (readyUrl != null && !"http".equals(readyUrl.getScheme()) && !"https".equals(readyUrl.getScheme())) {
      throw new Errors.UsageException("--ready-url is " + readyUrl + ": use an http:// or https:// URL such as"
          + " http://127.0.0.1:8080/ready");
    }
    Instance instance = instance();
    if (startNotReady || readyUrl != null) {
      instance = instance.state(InstanceState.STARTING);
    }
    Instance registered = instance;
    SigningKey signingKey = signKey == null ? null : SigningKey.read(signKey); // a bad file exits 2 before etcd
    HelloServer hello = serveHello
        ? HelloServer.start(instance.address(), instance.port(), instance.id(), helloDelay,
        helloFaultFile) : null;
    RegistrarConfig config = provider.registrar().drain(drain).shutdownHook(true).signingKey(signingKey).build();
    // The observer is told each keepalive's answer time on the registration's loop just before its KEEPALIVE
    // event, which the listener below prints with it (answered_us).
    AtomicReference<Duration> keepaliveAnsweredIn = new AtomicReference<>();
    RegistrarControls controls = RegistrarControls.PRODUCTION.withReregister(!noReregister)
        .withReportKeepalives(logKeepalives)
        .withKeepaliveObserver(logKeepalives ? (id, lease, ttl, answeredIn) -> keepaliveAnsweredIn.set(answeredIn)
            : RegistrarControls.KeepaliveObserver.NONE);
    PrintWriter out = spec.commandLine().getOut();
    // Before the registration starts: its "registered" line comes before register() returns (ReadySignals says why).
    ReadySignals signals = startNotReady || readyUrl != null ? ReadySignals.install(out) : null;
    CompletableFuture<RegistrationEvent> ended = new CompletableFuture<>();
    EtcdRegistry registry = EtcdRegistry.connect(common.etcdConfig());
    Registration registration;
    try {
      registration = NegativeControls.register(registry, instance, config, controls, event -> {
        JsonLines.print(out, EventLines.of(event, registered, keepaliveAnsweredIn.get()));
        if (event.type() == RegistrationEvent.Type.FAILED || event.type() == RegistrationEvent.Type.REVOKED) {
          ended.complete(event);
        }
      });
    } catch (RuntimeException e) {
      registry.close();
      if (hello != null) {
        hello.stop();
      }
      throw e;
    }
    if (hello != null) {
      // Runs beside the registrar's own hook, whose close() drains, then revokes: keep answering through the drain
      // (the same drain: drain() joins it), then stop, letting the calls in flight end.
      Registration drained = registration;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          drained.drain().get(config.drain().toMillis() + 10_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
          // the drain never fails; 10 s past its period, stop anyway
        }
        hello.stop();
      }, "muster-hello-stop"));
    }
    if (readyUrl != null) {
      ReadyPoller.start(readyUrl, registration, out);
    }
    if (signals != null) {
      signals.registered(registration);
    }
    RegistrationEvent last = awaitEnd(ended);
    if (registration.state() != RegistrationState.FAILED) {
      return 0; // closed by the shutdown hook; the JVM is exiting with the signal's status
    }
    spec.commandLine().getErr().println("muster: registration of " + instance.key().path() + " failed: "
        + last.detail());
    registry.close(); // revoke the lease if etcd still has it, and remove the shutdown hook
    return Errors.FAILURE;
  }

  Instance instance() {
    HostPort hostPort = HostPort.parse(address);
    Instance instance = Instance.of(service, hostPort.host(), hostPort.port());
    if (id != null) {
      instance = instance.id(id);
    }
    return provider.describe(instance, common.namespace);
  }


  private static RegistrationEvent awaitEnd(CompletableFuture<RegistrationEvent> ended) throws InterruptedException {
    try {
      return ended.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the registration listener failed", e.getCause());
    }
  }
}
