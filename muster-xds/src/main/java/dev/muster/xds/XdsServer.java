package dev.muster.xds;

import dev.muster.etcd.EtcdRegistry;
import dev.muster.metrics.MusterMeters;
import dev.muster.xds.internal.XdsRuntime;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * An xDS control plane for proxyless gRPC (and any xDS client): the Aggregated Discovery Service, state of the world,
 * serving for each service {@code S} of one namespace the chain a channel {@code xds:///S} walks — Listener
 * {@code S} (an API listener) → RouteConfiguration {@code S} → Cluster {@code S} (EDS) → ClusterLoadAssignment
 * {@code S} — from the registry's shared endpoint caches (docs/design-xds.md).
 *
 * <pre>{@code
 * try (EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of("http://127.0.0.1:2379"));
 *     XdsServer xds = XdsServer.start(registry, XdsConfig.defaults())) {
 *   // clients: GRPC_XDS_BOOTSTRAP_CONFIG=$(muster xds bootstrap --server 127.0.0.1:18000)
 * }
 * }</pre>
 *
 * <p>A service's cache is opened when the first stream asks for its assignment and released with the last; its
 * changes are pushed only to the streams that subscribe to it. While etcd is unreachable the last assignment stays
 * served, never emptied. A response a client refuses (NACK) is logged and counted and not sent again; the next
 * change is. Thread-safe; {@link #close()} ends every stream and releases the caches, and the registry stays the
 * caller's.
 */
public final class XdsServer implements AutoCloseable {
  private final XdsRuntime runtime;

  private XdsServer(XdsRuntime runtime) {
    this.runtime = runtime;
  }

  /**
   * Binds {@link XdsConfig#listen()} and serves.
   *
   * @throws java.io.UncheckedIOException naming the address when it cannot bind
   */
  public static XdsServer start(EtcdRegistry registry, XdsConfig config) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(config, "config");
    return new XdsServer(XdsRuntime.start(registry, config));
  }

  /** Where it listens (the port picked when {@link XdsConfig#listen()} had port 0). */
  public InetSocketAddress address() {
    return runtime.address();
  }

  /** ADS streams open now. */
  public int streams() {
    return runtime.streams();
  }

  /** Services whose cache is open because some stream asks for their assignment. */
  public int openServices() {
    return runtime.openFeeds();
  }

  /** Responses sent, every type. */
  public long responses() {
    return runtime.responses();
  }

  /** Responses clients accepted (ACK), every type. */
  public long acks() {
    return runtime.acks();
  }

  /** Responses clients refused (NACK), every type; each is logged with the client's reason. */
  public long nacks() {
    return runtime.nacks();
  }

  /** Bytes of responses sent. */
  public long bytesSent() {
    return runtime.bytesSent();
  }

  /**
   * Streams refused or ended for going over a limit: {@link XdsConfig#maxStreams()} open, more names in a request
   * than {@link XdsConfig#maxNames()}, or one service more than {@link XdsConfig#maxServices()}.
   */
  public long refusedStreams() {
    return runtime.refusedStreams();
  }

  /**
   * How long the last changes (up to 65,536 acknowledgements) took from the server's cache hearing them to each
   * subscribed client's ACK of the assignment that carries them.
   */
  public XdsPushLatency pushLatency() {
    return runtime.pushLatency();
  }

  /**
   * The server's part of {@link #pushLatency()}: from the cache hearing a change to the assignment carrying it
   * written to each subscribed stream's transport (a stream whose transport was not ready is not counted).
   */
  public XdsPushLatency writeLatency() {
    return runtime.writeLatency();
  }

  /** Assignments carrying a change that clients acknowledged (each stream's ACK counts once), since the start. */
  public long acknowledgedPushes() {
    return runtime.appliedPushes();
  }

  /** Starts {@link #pushLatency()}'s and {@link #writeLatency()}'s samples afresh. */
  public void clearPushLatency() {
    runtime.clearPushLatency();
  }

  /**
   * Binds the server's meters: the gauges {@code muster.xds.streams}, {@code muster.xds.services} and {@code
   * muster.xds.push.ack.p99.seconds}, and the counters {@code muster.xds.responses}, {@code muster.xds.acks}, {@code
   * muster.xds.nacks}, {@code muster.xds.bytes.sent} and {@code muster.xds.streams.refused}. Pull-based. Needs
   * micrometer-core, an optional dependency: the server itself runs without it ({@link XdsMeters} holds every use).
   */
  public MusterMeters.Binding bindMeters(MeterRegistry registry) {
    return XdsMeters.bind(registry, this);
  }

  @Override
  public void close() {
    runtime.close();
  }
}
