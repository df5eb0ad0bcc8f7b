package dev.muster.conformance;

import static org.awaitility.Awaitility.await;

import dev.muster.grpc.echo.Echo;
import dev.muster.sign.SigningKey;
import dev.muster.testing.ChildProcess;
import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.stub.ClientCalls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The providers every adapter faces: real {@code muster grpc-serve} processes of one service, each signed with the
 * fleet's key, lease TTL 3 s (keepalive 1 s), each with a health fault file. Every process is stopped by pid at
 * {@link #close()}, whatever the test did.
 */
final class Providers implements AutoCloseable {
  static final String SERVICE = "echo";
  static final List<String> JVM_FLAGS = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m");

  private final String endpoints;
  private final String namespace;
  private final String service;
  private final Path dir;
  private final SigningKey key = SigningKey.generate();
  private final Path keyFile;
  private final Map<String, Provider> started = new LinkedHashMap<>();

  /** One provider process; its health says NOT_SERVING while {@link #notServing()} holds. */
  record Provider(String id, ChildProcess process, Path faultFile) {
    void notServing() {
      write(faultFile, "NOT_SERVING");
    }

    void serving() {
      write(faultFile, "");
    }

    /** SIGUSR1: a provider started not ready goes UP. */
    void ready() {
      process.signal("USR1");
    }

    /** SIGTERM: health NOT_SERVING, DRAINING in etcd for the drain period, then GOAWAY and the revoke. */
    void drain() {
      process.terminate();
    }

    void kill() {
      process.kill();
    }
  }

  Providers(String endpoints, String namespace, Path dir) {
    this(endpoints, namespace, SERVICE, dir);
  }

  /** Providers of {@code service}. */
  Providers(String endpoints, String namespace, String service, Path dir) {
    this.endpoints = endpoints;
    this.namespace = namespace;
    this.service = service;
    this.dir = dir;
    this.keyFile = dir.resolve("fleet.key");
    write(keyFile, key.toPem());
    try {
      Files.setPosixFilePermissions(keyFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The fleet's signing key: what the consumers trust. */
  SigningKey key() {
    return key;
  }

  /** The trusted public key's file, as {@code --trust-key} and the Spring property take it. */
  Path publicKeyFile() {
    Path pub = dir.resolve("fleet.pub");
    if (!Files.exists(pub)) {
      write(pub, key.trustedKey().toPem());
    }
    return pub;
  }

  /** Starts {@code id} and waits until it serves and is registered; {@code notReady} registers it STARTING. */
  Provider start(String id, boolean notReady) {
    return start(id, notReady, List.of());
  }

  /** As {@link #start(String, boolean)}, with more {@code muster grpc-serve} options ({@code --weight 300}). */
  Provider start(String id, boolean notReady, List<String> options) {
    Path fault = dir.resolve(id + ".health");
    write(fault, "");
    List<String> args = new ArrayList<>(List.of("-jar", Path.of(System.getProperty("muster.jar")).toString(),
        "grpc-serve", "--service", service, "--id", id, "--namespace", namespace, "--endpoints", endpoints,
        "--ttl", "3s", "--keepalive", "1s", "--drain", "60s", "--sign-key", keyFile.toString(),
        "--health-fault-file", fault.toString()));
    if (notReady) {
      args.add("--start-not-ready");
    }
    args.addAll(options);
    ChildProcess p = ChildProcess.start("provider-" + id, ChildProcess.javaCommand(JVM_FLAGS, args));
    Provider provider = new Provider(id, p, fault);
    started.put(id, provider);
    await(id + " serving").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
        .until(() -> p.json().eventNames().contains("serving") || !p.isAlive());
    if (!p.isAlive()) {
      throw new AssertionError("provider " + id + " ended: " + p.stderrTail());
    }
    warmUp(id, p.json().firstEvent("serving").orElseThrow().path("port").asInt());
    return provider;
  }

  /**
   * One call straight to the new provider, before any adapter's: a cold JVM's first call (class loading, the first
   * compiles) took over a second on this loaded 2-core machine, past the adapters' 1 s attempt timeout, and
   * MusterClient then ejected the provider for 30 s, as designed, so a scenario's "both providers seen" never came
   * (a clean-clone suite of f4fc5b6, HealthConformanceIT and StalenessConformanceIT: ewma 1.03 s, ejected x1).
   */
  private static void warmUp(String id, int port) {
    ManagedChannel channel = Grpc.newChannelBuilderForAddress("127.0.0.1", port, InsecureChannelCredentials.create())
        .build();
    try {
      ClientCalls.blockingUnaryCall(channel, Echo.SAY, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)
          .withWaitForReady(), Echo.say("warm-up", 0));
    } catch (RuntimeException e) {
      throw new AssertionError("provider " + id + " did not answer its warm-up call on port " + port, e);
    } finally {
      channel.shutdownNow();
    }
  }

  Provider get(String id) {
    return started.get(id);
  }

  @Override
  public void close() {
    started.values().forEach(p -> p.process().close());
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
