package dev.muster.console;

import dev.muster.console.internal.ConsoleRuntime;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
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
 *   System.out.println(console.loginUrl()); // http://127.0.0.1:8080/#token=...: opening it logs in
 * }
 * }</pre>
 *
 * <p>Every {@code /api/*} request needs {@link #token()}: the page trades it for a session cookie; a program sends
 * {@code Authorization: Bearer TOKEN}. See {@link ConsoleConfig} for what else is refused.
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

  /**
   * {@code http://IP:PORT/#token=TOKEN}: opening it logs the browser in (the token is in the fragment, which the
   * browser never sends; the page trades it for a session cookie and drops it from the address bar).
   */
  public URI loginUrl() {
    return URI.create(url() + "#token=" + URLEncoder.encode(token(), StandardCharsets.UTF_8));
  }

  /** The secret every API request must show: {@link ConsoleConfig#token()}, or the one drawn at start. */
  public String token() {
    return runtime.token();
  }

  /**
   * Binds the console's meters: {@code muster.console.answers} by HTTP {@code status} (200, 400, 401, 403, 404,
   * 405, 409, 421, 500, 503, other; an event stream counts when it ends), {@code muster.console.drains}, the gauges
   * {@code muster.console.streams} (event streams open), {@code muster.console.services} (services watched) and
   * {@code muster.console.records.rejected} (records the watched services' caches excluded: forged, unsigned or
   * malformed). Pull-based: serving counts as it did before; closing the binding removes the meters. Needs
   * micrometer-core, an optional dependency: the console itself runs without it ({@link ConsoleMeters} holds every
   * use).
   */
  public MusterMeters.Binding bindMeters(MeterRegistry registry) {
    return ConsoleMeters.bind(Objects.requireNonNull(registry, "registry"), runtime);
  }

  @Override
  public void close() {
    runtime.close();
  }
}
