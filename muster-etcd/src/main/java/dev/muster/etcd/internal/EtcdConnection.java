package dev.muster.etcd.internal;

import dev.muster.InvalidInputException;
import dev.muster.etcd.EtcdConfig;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the jetcd {@link Client} and replaces it on demand.
 *
 * <p>Why replace it: jetcd's gRPC channel reconnects with grpc-java's backoff, which grows to 120 s, so after a
 * long etcd outage a channel may sit idle for minutes after etcd is back. Muster drives reconnects with its own
 * jittered backoff instead: a loop that sees repeated connection failures calls {@link #reset(Client)}, and the
 * next call goes through a fresh channel that connects at once. Clients are built with {@code waitForReady(false)}
 * so calls on a broken channel fail fast instead of queueing.
 *
 * <p>Thread-safe: {@link #client()} is a volatile read; {@link #reset(Client)} is synchronized and collapses
 * concurrent resets of the same client into one. The old client is closed on a background thread so no caller
 * waits for it. {@link #reachable()} holds its own lock, never the connection's.
 */
public final class EtcdConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EtcdConnection.class);
  /** How long one reachability probe's answer serves every cache of the connection. */
  static final Duration PROBE_SHARED_FOR = Duration.ofMillis(100);
  /** How long an endpoint has to accept the probe's TCP connection. */
  static final Duration PROBE_CONNECT_TIMEOUT = Duration.ofMillis(200);

  private final EtcdConfig config;
  private final SslContext ssl; // null without TLS
  private volatile Client client;
  private volatile boolean closed;
  private long resets;
  private final Object probeLock = new Object();
  private long probedAtNanos; // guarded by probeLock, as are the two below
  private boolean lastProbe;
  private long probes;

  public EtcdConnection(EtcdConfig config) {
    this.config = config;
    this.ssl = sslContext(config);
    this.client = build();
  }

  public EtcdConfig config() {
    return config;
  }

  /** The current client. Do not close it; do not keep it across a failure (ask again after a reset). */
  public Client client() {
    if (closed) {
      throw new IllegalStateException("the etcd connection to " + config.endpoints() + " is closed");
    }
    return client;
  }

  /** Whether {@code c} is still the current client (no reset replaced it); never throws, closed or not. */
  public boolean isCurrent(Client c) {
    return client == c;
  }

  /** Replaces {@code failed} with a fresh client, unless someone already did. */
  public synchronized void reset(Client failed) {
    if (closed || client != failed) {
      return;
    }
    Client fresh;
    try {
      fresh = build();
    } catch (RuntimeException e) {
      // e.g. during JVM shutdown a new client cannot register its threads; keep using the old one
      log.debug("could not replace the etcd client for {}: {}", config.endpoints(), e.toString());
      return;
    }
    resets++;
    log.debug("replacing the etcd client for {} (reset {})", config.endpoints(), resets);
    client = fresh;
    closeInBackground(failed);
  }

  /**
   * Whether some endpoint accepts a TCP connection now: the reachability probe of a broken cache (SPEC §4). The
   * answer is shared by every cache of this connection for {@link #PROBE_SHARED_FOR}. Without that, 2,500 broken
   * caches probing every 250 ms opened 10,000 TCP connections a second to etcd's port while it was down, and
   * slowed its restart (the scale bench's reconnect storm: etcd answered 9 to 14 s after its restart began, 1.5 to
   * 2.6 s with the probe shared). Callers wait while another caller's probe runs; each endpoint gets
   * {@link #PROBE_CONNECT_TIMEOUT} to accept.
   */
  public boolean reachable() {
    synchronized (probeLock) {
      long now = System.nanoTime();
      if (probedAtNanos != 0 && now - probedAtNanos < PROBE_SHARED_FOR.toNanos()) {
        return lastProbe;
      }
      boolean ok = false;
      for (URI endpoint : config.endpoints()) {
        try (Socket s = new Socket()) {
          s.connect(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()),
              (int) PROBE_CONNECT_TIMEOUT.toMillis());
          ok = true;
          break;
        } catch (IOException e) {
          // try the next endpoint
        }
      }
      lastProbe = ok;
      probedAtNanos = System.nanoTime();
      probes++;
      return ok;
    }
  }

  /** How many TCP probes {@link #reachable()} actually made (for tests). */
  long probes() {
    synchronized (probeLock) {
      return probes;
    }
  }

  /** How many times the client was replaced. */
  public synchronized long resets() {
    return resets;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    client.close();
  }

  /**
   * jetcd speaks TLS only when given an SslContext. It is built once, from the PEM files, when the connection is
   * made (so a bad file fails {@code connect()}, naming it), and every replacement client reuses it: a reset never
   * reads the files again. gRPC's builder adds the ALPN settings HTTP/2 needs. Without a CA file the JVM's default
   * trust applies.
   */
  private static SslContext sslContext(EtcdConfig config) {
    if (!"https".equals(config.endpoints().get(0).getScheme())) {
      return null;
    }
    EtcdConfig.Tls tls = config.tls();
    try {
      SslContextBuilder ssl = GrpcSslContexts.forClient();
      if (tls != null && tls.caCert() != null) {
        ssl.trustManager(tls.caCert().toFile());
      }
      if (tls != null && tls.clientCert() != null) {
        ssl.keyManager(tls.clientCert().toFile(), tls.clientKey().toFile());
      }
      return ssl.build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new InvalidInputException("tls", tls == null ? "(default trust)" : tls.toString(),
          "check the CA, certificate and key files (PEM; the key in PKCS#8 and matching the certificate): "
              + e.getMessage());
    }
  }

  private Client build() {
    Duration timeout = config.requestTimeout();
    var builder = Client.builder();
    if (config.credentials() != null) {
      builder.user(ByteSequence.from(config.credentials().user(), StandardCharsets.UTF_8))
          .password(ByteSequence.from(config.credentials().password(), StandardCharsets.UTF_8));
    }
    if (ssl != null) {
      builder.sslContext(ssl);
      if (config.tls() != null && config.tls().authority() != null) {
        builder.authority(config.tls().authority());
      }
    }
    return builder
        .endpoints(config.endpoints().toArray(URI[]::new))
        .waitForReady(false)
        .connectTimeout(timeout)
        .retryMaxAttempts(1)
        .retryDelay(50)
        .retryMaxDuration(timeout)
        // gRPC keepalive finds a dead TCP peer; etcd refuses pings more often than every 5 s.
        .keepaliveTime(Duration.ofSeconds(10))
        .keepaliveTimeout(Duration.ofSeconds(5))
        .build();
  }

  private static void closeInBackground(Client old) {
    Runnable close = () -> {
      try {
        old.close();
      } catch (RuntimeException e) {
        log.debug("closing a replaced etcd client failed: {}", e.toString());
      }
    };
    try {
      Thread t = new Thread(close, "muster-etcd-client-close");
      t.setDaemon(true);
      t.start();
    } catch (RuntimeException | OutOfMemoryError e) {
      close.run();
    }
  }
}
