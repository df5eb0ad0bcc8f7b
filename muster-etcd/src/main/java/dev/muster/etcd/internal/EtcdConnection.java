package dev.muster.etcd.internal;

import dev.muster.InvalidInputException;
import dev.muster.etcd.EtcdConfig;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns the jetcd {@link Client}, and decides alone when to replace it (docs/design-storms.md, "The design").
 *
 * <p>Why replace it at all: jetcd's gRPC channel reconnects with grpc-java's backoff, which grows to 120 s, so after
 * a long etcd outage a channel may sit idle for minutes after etcd is back. A fresh client connects at once. Clients
 * are built with {@code waitForReady(false)} so calls on a broken channel fail fast instead of queueing; a call on a
 * fresh channel that is still connecting waits for it.
 *
 * <p>Who decides: the caches and registrations that share the connection report what they saw, a success
 * ({@link #succeeded}) or a failure that blames the connection ({@link #failed}); none of them replaces the client.
 * The connection is in one of three states:
 * <ul>
 *   <li><b>UP</b>: the current client is in use. Successes are recorded as the time of the last one.
 *   <li><b>DOWN</b>: the shared reachability probe ({@link #reachable()}) found no endpoint accepting TCP. Nothing is
 *       replaced while etcd is down: a fresh client would be as broken as the old one.
 *   <li>Leaving DOWN: the first probe that sees an endpoint accept again replaces the client once
 *       ({@link Reason#ACCEPTS_AGAIN}), unless someone succeeded on the current client since DOWN began.
 *   <li><b>SUSPECT</b> (a failure reported while etcd accepts): the client is replaced ({@link Reason#SUSPECT}) only
 *       if nobody succeeded on it since the failed attempt started, only if it is older than twice its connect
 *       timeout, and only once its failures have persisted for a connect timeout: the first report that nobody
 *       outvoted since the client's last success is at least that old. So a straggler whose attempt timed out under a
 *       storm's load can never close a client on which other watches already resumed; a member's death in a cluster
 *       (its streams break, the channel moves to another member within milliseconds) is never taken for a stuck
 *       client; and a client is replaced at most once per twice its connect timeout.
 * </ul>
 *
 * <p>A client is replaced as a whole, with the {@link KeepAliveStream} that carries the registrations' keepalives and
 * the {@link WatchStream} that carries the caches' watches on its channel (over a few streams): the old streams are closed with the old
 * client (waiting keepalives and open watches fail as unavailable), and the next keepalive or watch opens one on the
 * new client.
 *
 * <p>Thread-safe. {@link #client()} and {@link #succeeded} are lock-free (a success is one volatile write, skipped
 * when the last recorded one is under {@link #SUCCESS_RESOLUTION} old, so thousands of caches' events do not
 * contend on it). {@link #failed} probes first, with no lock held, then takes the connection's lock only to decide;
 * the new client is built under it (no I/O: gRPC connects lazily) and the old one closed on a background thread.
 * {@link #reachable()} holds no lock while it probes ({@link SharedProbe}): at most one probe is in flight, run on
 * the thread of the caller that started it; the others wait for its answer, not for a lock. Then every caller, the prober or one handed its shared answer, decides the DOWN transitions from that answer under the
 * connection's lock before acting on it (an older probe's answer never overrides a newer one's).
 */
public final class EtcdConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EtcdConnection.class);
  /** How long one reachability probe's answer serves every cache of the connection. */
  static final Duration PROBE_SHARED_FOR = Duration.ofMillis(100);
  /** How long an endpoint has to accept the probe's TCP connection. */
  static final Duration PROBE_CONNECT_TIMEOUT = Duration.ofMillis(200);
  /** A success is recorded when the last recorded one is at least this old. */
  static final Duration SUCCESS_RESOLUTION = Duration.ofMillis(10);

  /** Why the client was replaced. */
  public enum Reason {
    /** The probe saw etcd accept TCP again after it refused, and nobody had succeeded on the client meanwhile. */
    ACCEPTS_AGAIN,
    /** A failure blamed the connection while etcd accepted, nobody had succeeded on it since, and it was old enough. */
    SUSPECT
  }

  /** What became of the failure reports: replaced, or why not. */
  public enum Verdict {
    /** This report replaced the client. */
    REPLACED,
    /** About a client already replaced. */
    STALE_CLIENT,
    /** Someone succeeded on the client after the failed attempt started. */
    OUTVOTED,
    /** No endpoint accepts TCP: etcd is down, a fresh client would not help. */
    DOWN,
    /** The client is younger than twice its connect timeout. */
    YOUNG,
    /**
     * The client's failures have not yet persisted for a connect timeout: the first report nobody outvoted since its
     * last success is younger than that (a member's death in a cluster breaks its streams; the channel moves on).
     */
    EARLY
  }

  /** One client, the keepalive and watch streams on its channel, and what its users reported about it. */
  private static final class Generation {
    final Client client;
    final KeepAliveStream keepAlives;
    final WatchStream watches;
    final long builtNanos;
    /** The time of the last success recorded on it; {@code builtNanos} until the first. */
    volatile long lastSuccessNanos;
    /**
     * When the first failure report that no success outvoted came in since the last success: the start of the
     * client's current run of failures, or 0 when it has none. Guarded by the connection's lock.
     */
    long failingSinceNanos;

    Generation(Client client, KeepAliveStream keepAlives, WatchStream watches, long builtNanos) {
      this.client = client;
      this.keepAlives = keepAlives;
      this.watches = watches;
      this.builtNanos = builtNanos;
      this.lastSuccessNanos = builtNanos;
    }

    boolean succeededAfter(long nanos) {
      return lastSuccessNanos - nanos > 0;
    }
  }

  private final EtcdConfig config;
  private final SslContext ssl; // null without TLS
  private final LongSupplier nanoTime;
  private final long youngNanos;
  /** How long a client's failures must persist, with no success, before it is replaced as suspect. */
  private final long persistNanos;
  private final KeepAliveCounters keepAliveCounters = new KeepAliveCounters();
  private final WatchCounters watchCounters = new WatchCounters();
  /** The watch ids of every generation's watch stream: etcd reads 0 as "assign one", so the first is 1. */
  private final java.util.concurrent.atomic.AtomicLong watchIds = new java.util.concurrent.atomic.AtomicLong();
  private volatile Generation current;
  private volatile boolean closed;
  // guarded by this:
  private boolean down;
  private long downSinceNanos;
  private long decidedProbe; // the number of the last probe whose answer was decided on
  private final Map<Reason, Long> replacements = new EnumMap<>(Reason.class);
  private final Map<Verdict, Long> verdicts = new EnumMap<>(Verdict.class);
  private final SharedProbe probe;

  public EtcdConnection(EtcdConfig config) {
    this(config, System::nanoTime);
  }

  /** With the clock that the state machine and the probe's sharing window read (tests). */
  EtcdConnection(EtcdConfig config, LongSupplier nanoTime) {
    this.config = config;
    if (config.sendsCredentialsInClear()) { // only with allowInsecureCredentials: EtcdConfig refuses it otherwise
      log.warn("etcd user {}'s password goes to {} in clear over http:// (insecure credentials allowed): anyone on"
          + " the path can read it and act as that user; use https:// endpoints", config.credentials().user(),
          config.endpoints());
    }
    this.ssl = sslContext(config);
    this.nanoTime = nanoTime;
    this.probe = new SharedProbe(config.endpoints(), PROBE_SHARED_FOR, PROBE_CONNECT_TIMEOUT, nanoTime);
    this.youngNanos = config.requestTimeout().multipliedBy(2).toNanos();
    this.persistNanos = config.requestTimeout().toNanos();
    this.current = newGeneration();
  }

  public EtcdConfig config() {
    return config;
  }

  /** The current client. Do not close it; report what happens on it; ask again after a failure. */
  public Client client() {
    if (closed) {
      throw new IllegalStateException("the etcd connection to " + config.endpoints() + " is closed");
    }
    return current.client;
  }

  /**
   * The keepalive stream of the current client: every registration's keepalives on one stream, opened on first use
   * and closed with its client (see {@link KeepAliveStream}). Report what happens on it as on {@link
   * KeepAliveStream#client()}.
   */
  KeepAliveStream keepAliveStream() {
    if (closed) {
      throw new IllegalStateException("the etcd connection to " + config.endpoints() + " is closed");
    }
    return current.keepAlives;
  }

  /**
   * The watch streams of the current client: every cache's watch, spread round-robin over
   * {@link EtcdConfig#watchStreams()} {@code Watch} streams, each opened on first use and closed with its client (see
   * {@link WatchStream}). Report what happens on them as on {@link WatchStream#client()}.
   */
  WatchStream watchStream() {
    if (closed) {
      throw new IllegalStateException("the etcd connection to " + config.endpoints() + " is closed");
    }
    return current.watches;
  }

  /** Whether {@code c} is still the current client (not replaced); never throws, closed or not. */
  public boolean isCurrent(Client c) {
    return current.client == c;
  }

  /**
   * Something succeeded on {@code c}: a watch was created or delivered, a range, grant, put or keepalive was
   * answered. Lock-free and cheap; a report about a replaced client is ignored.
   */
  public void succeeded(Client c) {
    Generation g = current;
    if (g.client != c) {
      return;
    }
    long now = nanoTime.getAsLong();
    if (now - g.lastSuccessNanos >= SUCCESS_RESOLUTION.toNanos()) {
      g.lastSuccessNanos = now;
    }
  }

  /**
   * An attempt on {@code c} that started at {@code attemptStartedNanos} ({@link System#nanoTime()}) failed in a way
   * that blames the connection (unavailable, no answer in time, a stalled stream). The connection decides whether to
   * replace the client; see the class comment. Probes etcd's port (bounded by {@link #PROBE_CONNECT_TIMEOUT} per
   * endpoint, shared for {@link #PROBE_SHARED_FOR}): call it where blocking that long is allowed.
   */
  public Verdict failed(Client c, long attemptStartedNanos, String what) {
    Generation g = current;
    if (closed || g.client != c) {
      return count(Verdict.STALE_CLIENT);
    }
    if (g.succeededAfter(attemptStartedNanos)) {
      return count(Verdict.OUTVOTED);
    }
    boolean accepts = reachable(); // may itself replace the client, when etcd has just come back
    synchronized (this) {
      if (closed || current != g) {
        return countLocked(Verdict.STALE_CLIENT);
      }
      if (!accepts) {
        return countLocked(Verdict.DOWN);
      }
      if (g.succeededAfter(attemptStartedNanos)) {
        return countLocked(Verdict.OUTVOTED);
      }
      long now = nanoTime.getAsLong();
      if (now - g.builtNanos < youngNanos) {
        return countLocked(Verdict.YOUNG);
      }
      if (g.failingSinceNanos == 0 || g.succeededAfter(g.failingSinceNanos)) {
        g.failingSinceNanos = now; // the first failure since the last success: a run of failures starts here
      }
      if (now - g.failingSinceNanos < persistNanos) {
        return countLocked(Verdict.EARLY);
      }
      replaceLocked(g, Reason.SUSPECT, what);
      return countLocked(Verdict.REPLACED);
    }
  }

  private synchronized Verdict count(Verdict v) {
    return countLocked(v);
  }

  private Verdict countLocked(Verdict v) {
    verdicts.merge(v, 1L, Long::sum);
    return v;
  }

  /**
   * Whether some endpoint accepts a TCP connection now: the reachability probe of a broken cache (SPEC §4), and the
   * connection's own test for DOWN. The answer is shared by every user of this connection for
   * {@link #PROBE_SHARED_FOR}. Without that, 2,500 broken caches probing every 250 ms opened 10,000 TCP connections a
   * second to etcd's port while it was down, and slowed its restart (the scale bench's reconnect storm: etcd answered
   * 9 to 14 s after its restart began, 1.5 to 2.6 s with the probe shared). Each endpoint gets
   * {@link #PROBE_CONNECT_TIMEOUT} to accept. A TCP accept comes 1 to 2 s before a restarted etcd serves
   * (docs/storms-accept-vs-serve.txt); a call on the client built at the accept waits for it
   * (docs/storms-watch-create-in-gap.txt).
   *
   * <p>No lock is held while probing ({@link SharedProbe}): callers wait for the probe in flight, not for a lock.
   * Every caller then decides the transition from the answer it got, under the connection's lock, before it acts on
   * the answer: one handed the shared answer while its prober has not decided yet must not act on "accepts" while the
   * connection still counts as DOWN (a failure report would replace the client as SUSPECT). Deciding the same probe
   * twice changes nothing; an older probe's answer never overrides a newer one's.
   */
  public boolean reachable() {
    SharedProbe.Answer answer = probe.answer();
    probed(answer.accepts(), answer.number());
    return answer.accepts();
  }

  private synchronized void probed(boolean accepts, long probe) {
    if (closed || probe < decidedProbe) {
      return;
    }
    decidedProbe = probe;
    if (!accepts) {
      if (!down) {
        down = true;
        downSinceNanos = nanoTime.getAsLong();
        log.info("etcd at {} accepts no connection: the client is kept until it does", config.endpoints());
      }
      return;
    }
    if (down) {
      leaveDownLocked();
    }
  }

  /** DOWN ends: the client is replaced once, unless someone succeeded on it since DOWN began. */
  private void leaveDownLocked() {
    down = false;
    Generation g = current;
    if (g.succeededAfter(downSinceNanos)) {
      log.info("etcd at {} accepts connections again; the client already succeeded since, kept", config.endpoints());
      return;
    }
    replaceLocked(g, Reason.ACCEPTS_AGAIN, "etcd accepts connections again");
  }

  private void replaceLocked(Generation old, Reason reason, String what) {
    Generation fresh;
    try {
      fresh = newGeneration();
    } catch (RuntimeException e) {
      // e.g. during JVM shutdown a new client cannot register its threads; keep using the old one
      log.debug("could not replace the etcd client for {}: {}", config.endpoints(), e.toString());
      return;
    }
    replacements.merge(reason, 1L, Long::sum);
    log.info("replacing the etcd client for {} ({}: {}; replacement {})", config.endpoints(), reason, what,
        resetsLocked());
    current = fresh;
    closeInBackground(old);
  }

  /** How many TCP probes {@link #reachable()} started, the one in flight included (for tests). Lock-free. */
  long probes() {
    return probe.started();
  }

  /** How many times the client was replaced. */
  public synchronized long resets() {
    return resetsLocked();
  }

  private long resetsLocked() {
    return replacements.values().stream().mapToLong(Long::longValue).sum();
  }

  /**
   * The replacements by reason, what became of the failure reports, and the keepalive and watch streams' counters
   * (for diagnostics, tests and the bench).
   */
  public synchronized Map<String, Long> stats() {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Reason r : Reason.values()) {
      out.put("replaced." + r.name().toLowerCase(java.util.Locale.ROOT), replacements.getOrDefault(r, 0L));
    }
    for (Verdict v : Verdict.values()) {
      out.put("reports." + v.name().toLowerCase(java.util.Locale.ROOT), verdicts.getOrDefault(v, 0L));
    }
    keepAliveCounters.addTo(out);
    watchCounters.addTo(out);
    return out;
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    current.watches.close();
    current.keepAlives.close();
    current.client.close();
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

  /** A client and its streams; no I/O (gRPC connects lazily, the streams open on first use). */
  private Generation newGeneration() {
    ChannelCapture capture = new ChannelCapture();
    Client client = build(capture);
    return new Generation(client, new KeepAliveStream(client, capture, config.credentials(), keepAliveCounters),
        new WatchStream(client, capture, config.credentials(), config.watchStreams(), watchCounters, watchIds,
            () -> succeeded(client)),
        nanoTime.getAsLong());
  }

  private Client build(ChannelCapture capture) {
    Duration timeout = config.requestTimeout();
    var builder = Client.builder().interceptor(capture);
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

  private static void closeInBackground(Generation old) {
    Runnable close = () -> {
      try {
        old.watches.close();
        old.keepAlives.close();
        old.client.close();
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
