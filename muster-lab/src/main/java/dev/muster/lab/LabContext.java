package dev.muster.lab;

import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.FaultProxy;
import dev.muster.testing.JsonLog;
import dev.muster.testing.LoopbackPorts;
import dev.muster.testing.TempDirs;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * What a running scenario may use: the shared parameters, its own directory for logs, private etcd clusters and
 * fault proxies, and processes started from Muster's jar. {@link #close()} stops every process by pid (SIGKILL if
 * still alive), every proxy and every etcd member, also when the scenario failed.
 *
 * <p>Not thread-safe: one scenario thread uses it.
 */
public final class LabContext implements AutoCloseable {
  private final LabParams params;
  private final Path dir;
  private final List<String> musterCommand;
  private final PrintStream progress;
  private final List<ChildProcess> processes = new ArrayList<>();
  private final List<EtcdCluster> clusters = new ArrayList<>();
  private final List<FaultProxy> proxies = new ArrayList<>();

  /**
   * A context whose files go to {@code dir}, which is emptied first (it is the run's own), starting processes with
   * {@code musterCommand}; {@link Lab} opens one per scenario, {@code muster sim ttl --validate} one for its run.
   */
  public LabContext(LabParams params, Path dir, List<String> musterCommand, PrintStream progress) {
    this.params = params;
    this.dir = dir;
    this.musterCommand = musterCommand;
    this.progress = progress;
    try {
      if (Files.exists(dir)) {
        // A previous run's files (keys, certificates, logs) would be read as this run's: keygen refuses to
        // overwrite a key, and a stale certificate fails the TLS handshake. The directory is the lab's own.
        TempDirs.delete(dir);
      }
      Files.createDirectories(dir);
    } catch (IOException | UncheckedIOException e) {
      throw new LabException("cannot prepare " + dir + " for a fresh run: " + e.getMessage() + "; remove it or"
          + " choose another --out");
    }
  }

  public LabParams params() {
    return params;
  }

  public Path dir() {
    return dir;
  }

  /** Starts a private etcd cluster (its data and logs under this scenario's directory are temporary). */
  public EtcdCluster etcd(int members) {
    return etcd(EtcdCluster.builder().members(members));
  }

  /** Starts a private etcd cluster as {@code builder} describes it (TLS, auth), stopped by {@link #close()}. */
  public EtcdCluster etcd(EtcdCluster.Builder builder) {
    EtcdCluster cluster = builder.build();
    clusters.add(cluster);
    return cluster.start();
  }

  /** A fault proxy in front of {@code target}. */
  public FaultProxy proxy(URI target) {
    FaultProxy p = FaultProxy.to(target);
    proxies.add(p);
    return p;
  }

  /** Starts {@code muster ARGS...} as process {@code name}; its stdout goes to {@code NAME.jsonl}. */
  public ChildProcess start(String name, String... args) {
    List<String> command = new ArrayList<>(musterCommand);
    command.addAll(List.of(args));
    // Killed by pid in close(), and on JVM shutdown too (Ctrl-C during a scenario), like the etcd members.
    ChildProcess p = ChildProcess.start(name, command, dir.resolve(name + ".jsonl"), dir.resolve(name + ".err"));
    processes.add(p);
    return p;
  }

  /** A provider serving GET /hello on a free port, registered with the lab's TTL and keepalive. */
  public ChildProcess provider(String id, String service, String endpoints, String... extra) {
    return provider(id, service, endpoints, LoopbackPorts.pick(), extra);
  }

  /**
   * {@link #provider(String, String, String, String...)} on {@code port}, for a scenario that must name the
   * provider's own address in its arguments (e.g. {@code --ready-url http://127.0.0.1:PORT/health}).
   */
  public ChildProcess provider(String id, String service, String endpoints, int port, String... extra) {
    List<String> args = new ArrayList<>(List.of("register", "--service", service, "--id", id, "--address",
        "127.0.0.1:" + port, "--serve-hello",
        "--ttl", LabParams.format(params.ttl()), "--keepalive", LabParams.format(params.keepalive()),
        "--log-keepalives", "--endpoints", endpoints));
    args.addAll(List.of(extra));
    return start(id, args.toArray(String[]::new));
  }

  /**
   * A consumer calling GET /hello every {@code callInterval} with the lab's attempt timeout, round robin: with
   * {@code ejectAndRetry} consumer A (eject after 1 failure for the ejection time, 1 retry), else consumer B.
   */
  public ChildProcess consumer(String name, String service, String endpoints, boolean ejectAndRetry, String... extra) {
    List<String> args = new ArrayList<>(List.of("call", service, "/hello", "--count", "0", "--interval",
        LabParams.format(params.callInterval()), "--attempt-timeout", LabParams.format(params.attemptTimeout()),
        "--policy", "ROUND_ROBIN", "--json", "--endpoints", endpoints));
    if (ejectAndRetry) {
      args.addAll(List.of("--idempotent", "--eject-after", "1", "--ejection-time",
          LabParams.format(params.ejectionTime()), "--max-retries", Integer.toString(params.maxRetries())));
    } else {
      args.addAll(List.of("--no-eject", "--max-retries", "0"));
    }
    args.addAll(List.of(extra));
    return start(name, args.toArray(String[]::new));
  }

  /**
   * A gRPC provider ({@code muster grpc-serve}: Echo and health on a free port) registered with the lab's TTL and
   * keepalive. It logs no renewals, so stale windows measured on it are not split.
   */
  public ChildProcess grpcProvider(String id, String service, String endpoints, String... extra) {
    List<String> args = new ArrayList<>(List.of("grpc-serve", "--service", service, "--id", id, "--port", "0",
        "--ttl", LabParams.format(params.ttl()), "--keepalive", LabParams.format(params.keepalive()),
        "--endpoints", endpoints));
    args.addAll(List.of(extra));
    return start(id, args.toArray(String[]::new));
  }

  /**
   * A gRPC consumer ({@code muster grpc-call SERVICE --json}) calling Echo every {@code callInterval}, balanced by
   * {@code policy} ({@code muster}, {@code round_robin}, {@code pick_first}). Like {@code muster call}, each attempt
   * gets {@code attemptTimeout}: a call's deadline is {@code attemptTimeout × (1 + maxRetries)}, and with
   * {@code muster} each attempt also ends at {@code attemptTimeout} (grpc-call's {@code --attempt-timeout});
   * {@code maxRetries} applies to {@code muster} only. The {@code extra} arguments must not repeat these options
   * (picocli rejects an option given twice).
   */
  public ChildProcess grpcConsumer(String name, String service, String endpoints, String policy, int maxRetries,
      Duration attemptTimeout, String... extra) {
    Duration deadline = attemptTimeout.multipliedBy(1L + maxRetries);
    List<String> args = new ArrayList<>(List.of("grpc-call", service, "--count", "0", "--interval",
        LabParams.format(params.callInterval()), "--deadline", LabParams.format(deadline), "--attempt-timeout",
        LabParams.format(attemptTimeout), "--policy", policy, "--max-retries", Integer.toString(maxRetries), "--json",
        "--endpoints", endpoints));
    args.addAll(List.of(extra));
    return start(name, args.toArray(String[]::new));
  }

  /**
   * A gRPC consumer calling Echo every {@code callInterval} through {@code xds:///SERVICE} with grpc-java's own xDS
   * client, fed by the {@code muster xds} at {@code xdsPort} ({@code grpc-call --xds-server}); each call's deadline
   * is {@code deadline}, and the xds server decides the balancing.
   */
  public ChildProcess xdsConsumer(String name, String service, int xdsPort, Duration deadline, String... extra) {
    List<String> args = new ArrayList<>(List.of("grpc-call", service, "--count", "0", "--interval",
        LabParams.format(params.callInterval()), "--deadline", LabParams.format(deadline), "--json",
        "--xds-server", "127.0.0.1:" + xdsPort));
    args.addAll(List.of(extra));
    return start(name, args.toArray(String[]::new));
  }

  /**
   * Node's own xDS client ({@code @grpc/grpc-js-xds}) calling Echo every {@code callInterval} through
   * {@code xds:///SERVICE} with {@code muster xds} at {@code xdsPort}: {@code xds-client.js} in the directory
   * {@code MUSTER_NODE_CLIENT} names ({@code ./muster lab} installs it there with npm ci), printing the call lines
   * {@code grpc-call --json} prints.
   */
  public ChildProcess nodeXdsConsumer(String name, String service, int xdsPort, Duration deadline) {
    return nodeXdsConsumer(name, service, xdsPort, deadline, 0);
  }

  /** {@link #nodeXdsConsumer(String, String, int, Duration)}, each call asking the server to wait {@code delayMs}. */
  public ChildProcess nodeXdsConsumer(String name, String service, int xdsPort, Duration deadline, long delayMs) {
    String dir = System.getenv("MUSTER_NODE_CLIENT");
    if (dir == null || !Files.isDirectory(Path.of(dir, "node_modules", "@grpc", "grpc-js-xds"))) {
      throw new IllegalStateException("Node's xDS client is not installed (MUSTER_NODE_CLIENT=" + dir + "): run the"
          + " lab with ./muster lab, which installs it");
    }
    String bootstrap = dev.muster.xds.XdsBootstrap.of("127.0.0.1:" + xdsPort).withNodeId(name).toJson();
    List<String> command = List.of("env", "GRPC_XDS_BOOTSTRAP_CONFIG=" + bootstrap, "node",
        Path.of(dir, "xds-client.js").toString(), "--target", "xds:///" + service, "--interval-ms",
        Long.toString(params.callInterval().toMillis()), "--deadline-ms", Long.toString(deadline.toMillis()),
        "--delay-ms", Long.toString(delayMs));
    ChildProcess p = ChildProcess.start(name, command, this.dir.resolve(name + ".jsonl"),
        this.dir.resolve(name + ".err"));
    processes.add(p);
    return p;
  }

  /**
   * {@code muster xds} on {@code 127.0.0.1:port} for the registry at {@code endpoints}, with {@code extra} options
   * (the hidden negative controls {@code --no-push}, {@code --empty-on-stale}); returns once it serves.
   */
  public ChildProcess xdsServer(String name, String endpoints, int port, String... extra) {
    List<String> args = new ArrayList<>(List.of("xds", "--listen", "127.0.0.1:" + port, "--endpoints", endpoints));
    args.addAll(List.of(extra));
    ChildProcess p = start(name, args.toArray(String[]::new));
    await(name + " serving", Duration.ofSeconds(60), () -> p.json().has("serving") || !p.isAlive());
    if (!p.isAlive()) {
      throw new IllegalStateException(name + " ended: " + p.stderrTail());
    }
    return p;
  }

  /** A {@code muster watch SERVICE --json} process. */
  public ChildProcess watcher(String name, String service, String endpoints, String... extra) {
    List<String> args = new ArrayList<>(List.of("watch", service, "--json", "--endpoints", endpoints));
    args.addAll(List.of(extra));
    return start(name, args.toArray(String[]::new));
  }

  /** Waits until {@code condition} holds; fails the scenario with {@code what} after {@code limit}. */
  public void await(String what, Duration limit, BooleanSupplier condition) {
    await(what, limit, Duration.ofMillis(20), condition);
  }

  /**
   * {@link #await(String, Duration, BooleanSupplier)}, asking {@code condition} every {@code every}: for conditions
   * that read long logs (a consumer calling 100 times a second), so the lab's own parsing does not load the
   * machine the processes under test share.
   */
  public void await(String what, Duration limit, Duration every, BooleanSupplier condition) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new LabException("timed out after " + limit.toMillis() + " ms waiting for " + what);
      }
      sleep(every);
    }
  }

  public void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LabException("interrupted");
    }
  }

  /**
   * Records a fault or step the lab itself performed (a signal, a cut, a restart) in {@code lab.jsonl}, with the
   * same microsecond timestamps as the processes' logs, so the report can place it exactly.
   */
  public void mark(String event, String detail) {
    String line = JsonLog.line(JsonLog.entry(event, java.time.Instant.now()).put("detail", detail));
    try {
      Files.writeString(dir.resolve("lab.jsonl"), line + "\n",
          java.nio.charset.StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + dir.resolve("lab.jsonl") + ": " + e.getMessage(), e);
    }
  }

  /** A progress note under the scenario's line. */
  public void note(String text) {
    progress.println("    " + text);
  }

  @Override
  public void close() {
    processes.forEach(ChildProcess::close);
    proxies.forEach(FaultProxy::close);
    clusters.forEach(EtcdCluster::close);
  }
}
