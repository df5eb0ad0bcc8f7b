package dev.muster.console;

import dev.muster.console.internal.ConsoleRuntime;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Clock;
import java.util.Objects;

/**
 * A live web console over an etcd registry: namespaces and services, one service's instances, the event stream and
 * the etcd cluster, updated by server-sent events from Muster's own caches (the browser never talks to etcd).
 * Read-only unless {@link ConsoleConfig#allowDrain()}.
 *
 * <pre>{@code
 * try (EtcdRegistry registry = EtcdRegistry.connect(config);
 *      EtcdMaintenance etcd = EtcdMaintenance.connect(config);
 *      ConsoleServer console = ConsoleServer.start(registry, etcd, ConsoleConfig.defaults())) {
 *   System.out.println(console.url());
 * }
 * }</pre>
 *
 * <p>Thread-safe. {@link #start} returns once the server listens; closing stops the server and its threads and
 * closes its caches, not the registry or the maintenance client given to it.
 */
public final class ConsoleServer implements AutoCloseable {
  private final ConsoleRuntime runtime;

  private ConsoleServer(ConsoleRuntime runtime) {
    this.runtime = runtime;
  }

  /**
   * Starts serving.
   *
   * @throws java.io.UncheckedIOException when {@link ConsoleConfig#listen()} cannot be bound
   */
  public static ConsoleServer start(EtcdRegistry registry, EtcdMaintenance etcd, ConsoleConfig config) {
    return start(registry, etcd, config, Clock.systemUTC());
  }

  /** As {@link #start(EtcdRegistry, EtcdMaintenance, ConsoleConfig)}, with the clock events are stamped by. */
  public static ConsoleServer start(EtcdRegistry registry, EtcdMaintenance etcd, ConsoleConfig config, Clock clock) {
    return new ConsoleServer(ConsoleRuntime.start(Objects.requireNonNull(registry, "registry"),
        Objects.requireNonNull(etcd, "etcd"), Objects.requireNonNull(config, "config"),
        Objects.requireNonNull(clock, "clock")));
  }

  /** The address bound (the port chosen when {@link ConsoleConfig#listen()} asked for 0). */
  public InetSocketAddress address() {
    return runtime.address();
  }

  /** {@code http://IP:PORT/}. */
  public URI url() {
    InetSocketAddress a = address();
    String ip = a.getAddress().getHostAddress();
    return URI.create("http://" + (ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip) + ":" + a.getPort() + "/");
  }

  @Override
  public void close() {
    runtime.close();
  }
}
