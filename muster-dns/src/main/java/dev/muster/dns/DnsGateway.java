package dev.muster.dns;

import dev.muster.dns.internal.DnsCounters;
import dev.muster.dns.internal.NamespaceZone;
import dev.muster.dns.internal.Responder;
import dev.muster.dns.internal.ResponseRateLimiter;
import dev.muster.dns.internal.TxtMetadata;
import dev.muster.dns.internal.ZoneFeeds;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.etcd.ServiceDirectory;
import dev.muster.metrics.MusterMeters;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xbill.DNS.Name;

/**
 * An authoritative DNS-SD responder over UDP and TCP for the namespaces of one {@link EtcdRegistry}: PTR, SRV, TXT,
 * A and AAAA answered from endpoint caches, never from a registry round trip (docs/design-dns.md).
 *
 * <p>Threads: {@link DnsConfig#udpThreads()} threads share one UDP socket, each receiving, answering and sending;
 * one thread accepts TCP connections, served by a pool of at most {@link DnsConfig#maxTcpConnections()} threads
 * (at most {@link DnsConfig#tcpPerSource()} from one address); one timer thread closes each connection at its
 * {@link DnsConfig#tcpDeadline()}; one directory thread lists each namespace's services. Every UDP reply passes the
 * response rate limiter first ({@link ResponseRateLimiter}), and a source outside {@link DnsConfig#allowFrom()} is
 * refused (UDP) or closed at accept (TCP). Answers are built from immutable per-service records that
 * the caches' notifiers rebuild on each change, so the serving threads take no lock.
 *
 * <p>{@link #start} returns once the sockets are bound and the first listing (and each cache's first set) is in,
 * or after {@code firstSetTimeout} (then serving what it has, and logging which caches are late).
 * {@link #close()} stops the threads and closes the caches; the registry stays the caller's.
 */
public final class DnsGateway implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DnsGateway.class);
  private static final int MAX_TCP_MESSAGE = 65_535;

  private final DnsConfig config;
  private final DnsCounters counters = new DnsCounters();
  private final List<NamespaceZone> zones = new ArrayList<>();
  private final EtcdRegistry registry;
  private final ZoneFeeds feeds;
  private volatile ServiceDirectory directory; // null until begin()
  private final Responder responder;
  private final ResponseRateLimiter limiter;
  private final DatagramChannel udp;
  private final ServerSocket tcp;
  private final List<Thread> udpThreads = new ArrayList<>();
  private final Thread acceptor;
  private final ThreadPoolExecutor connections;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  /** Open TCP connections by source address; an entry goes when its count reaches 0 (changed atomically per key). */
  private final Map<InetAddress, Integer> perSource = new ConcurrentHashMap<>();
  private final ScheduledThreadPoolExecutor deadlines;
  private volatile boolean closed;

  /**
   * What the gateway has done so far.
   *
   * @param rateLimited UDP queries dropped by response rate limiting
   * @param slipped UDP queries over a rate limit answered with an empty TC reply instead
   * @param tcpRefused TCP connections closed at accept: {@link DnsConfig#maxTcpConnections()} open already
   * @param notAllowed queries (UDP, refused) and connections (TCP, closed) from outside {@link DnsConfig#allowFrom()}
   * @param minimalAny ANY questions answered with RFC 8482's one HINFO
   * @param tcpPerSourceRefused TCP connections closed at accept: {@link DnsConfig#tcpPerSource()} open already from
   *     that address
   * @param tcpDeadlineClosed TCP connections closed at their {@link DnsConfig#tcpDeadline()}
   * @param udpBytesIn UDP bytes received (queries)
   * @param udpBytesOut UDP bytes sent (replies)
   */
  public record Stats(long queries, long answered, long nodata, long nxdomain, long refused, long formerr,
      long notimp, long truncated, long dropped, long rateLimited, long slipped, long tcpConnections,
      long tcpRefused, long errors, long staleRefused, long notAllowed, long minimalAny, long tcpPerSourceRefused,
      long tcpDeadlineClosed, long udpBytesIn, long udpBytesOut) {}

  private DnsGateway(EtcdRegistry registry, DnsConfig config, Clock clock) throws IOException {
    this.config = config;
    this.registry = registry;
    Name domain = Name.fromString(config.domain());
    Map<String, NamespaceZone> byNamespace = new HashMap<>();
    for (String ns : config.namespaces()) {
      NamespaceZone zone = new NamespaceZone(ns, domain, config.ttl().toSeconds(), config.staleTtl().toSeconds(),
          clock);
      zones.add(zone);
      byNamespace.put(ns, zone);
    }
    this.feeds = new ZoneFeeds(byNamespace, config.ttl().toSeconds(), config.staleTtl().toSeconds(), config.zone(),
        TxtMetadata.of(config.txtMetadata()), clock);
    this.responder = new Responder(zones, config.maxUdpPayload(), config.maxStale(), config.minimalAny(), clock,
        counters);
    List<Cidr> exempt = config.rrlExempt();
    this.limiter = new ResponseRateLimiter(config.rateLimit(), config.rateBurst(), config.rrlResponsesPerSecond(),
        config.slip(), config.rrlIpv4Prefix(), config.rrlIpv6Prefix(), a -> Cidr.anyContains(exempt, a),
        System::nanoTime);
    Sockets bound = bind(config.listen(), config.listen().getPort());
    this.udp = bound.udp();
    this.tcp = bound.tcp();
    this.connections = new ThreadPoolExecutor(0, config.maxTcpConnections(), 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), numbered("muster-dns-tcp"));
    this.acceptor = daemon("muster-dns-accept").newThread(this::acceptLoop);
    this.deadlines = new ScheduledThreadPoolExecutor(1, daemon("muster-dns-tcp-deadline"));
    this.deadlines.setRemoveOnCancelPolicy(true);
  }

  /** A UDP channel and a TCP listener bound to the same address and port. */
  record Sockets(DatagramChannel udp, ServerSocket tcp) {}

  /** How many ports to try when the OS picks one (port 0) and TCP finds it taken. */
  static final int BIND_ATTEMPTS = 32;

  /**
   * Binds UDP, then TCP on the port UDP got. With a fixed port a failure is final. With port 0 the OS picks a port
   * free for UDP, which TCP may find taken (a listener, or the local end of an outgoing connection such as this
   * process's own to etcd: they share the ephemeral range): then both are closed and another port is tried, up to
   * {@link #BIND_ATTEMPTS} times. A fresh-clone test run once hit exactly that. {@code firstUdpPort} is the port asked
   * of UDP on the first attempt ({@code listen}'s own port outside tests).
   */
  static Sockets bind(InetSocketAddress listen, int firstUdpPort) throws IOException {
    for (int attempt = 1; ; attempt++) {
      DatagramChannel u = null;
      ServerSocket t = null;
      try {
        u = DatagramChannel.open(listen.getAddress() instanceof java.net.Inet6Address
            ? StandardProtocolFamily.INET6 : StandardProtocolFamily.INET);
        u.bind(new InetSocketAddress(listen.getAddress(), attempt == 1 ? firstUdpPort : listen.getPort()));
        int port = ((InetSocketAddress) u.getLocalAddress()).getPort();
        t = new ServerSocket();
        t.setReuseAddress(true);
        t.bind(new InetSocketAddress(listen.getAddress(), port), 128);
        return new Sockets(u, t);
      } catch (BindException e) {
        closeQuietly(u);
        closeQuietly(t);
        if (listen.getPort() != 0 || attempt == BIND_ATTEMPTS) {
          throw e;
        }
      } catch (IOException e) {
        closeQuietly(u);
        closeQuietly(t);
        throw e;
      }
    }
  }

  /**
   * Binds {@link DnsConfig#listen()} (UDP and TCP on one port; port 0 picks a free one), lists the namespaces'
   * services, opens their caches, waits up to {@code firstSetTimeout} for their first sets, and starts serving.
   *
   * @throws UncheckedIOException when the address cannot be bound (in use, or not an address of this host); the
   *     message says which and what to do
   */
  public static DnsGateway start(EtcdRegistry registry, DnsConfig config, Duration firstSetTimeout) {
    return start(registry, config, firstSetTimeout, Clock.systemUTC());
  }

  static DnsGateway start(EtcdRegistry registry, DnsConfig config, Duration firstSetTimeout, Clock clock) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(config, "config");
    DnsGateway g;
    try {
      g = new DnsGateway(registry, config, clock);
    } catch (BindException e) {
      throw new UncheckedIOException("cannot listen on " + hostPort(config.listen()) + " (" + e.getMessage()
          + "): pick a free port with --listen, or stop what holds it", e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + hostPort(config.listen()) + ": " + e.getMessage(), e);
    }
    try {
      g.begin(firstSetTimeout);
    } catch (RuntimeException | Error e) {
      g.close();
      throw e;
    }
    return g;
  }

  private void begin(Duration firstSetTimeout) {
    long deadline = System.nanoTime() + firstSetTimeout.toNanos();
    directory = ServiceDirectory.builder(registry, feeds).namespaces(config.namespaces())
        .trustedKeys(config.trustedKeys()).relistInterval(config.servicesRefresh()).start();
    if (!directory.awaitListed(firstSetTimeout)) {
      log.warn("the services of {} could not be read within {} ms; serving what is known, and retrying",
          config.namespaces(), firstSetTimeout.toMillis());
    } else if (!feeds.awaitPublished(directory.caches().keySet(),
        Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
      log.warn("not every service has its first set after {} ms; serving what is known",
          firstSetTimeout.toMillis());
    }
    for (int i = 0; i < config.udpThreads(); i++) {
      Thread t = daemon("muster-dns-udp-" + i).newThread(this::udpLoop);
      udpThreads.add(t);
      t.start();
    }
    acceptor.start();
    log.info("serving zones {} on {} (udp, tcp)", zones.stream().map(z -> z.origin().toString()).toList(),
        hostPort(address()));
  }

  /** The bound address: {@link DnsConfig#listen()} with the port picked when it asked for 0. */
  public InetSocketAddress address() {
    return new InetSocketAddress(config.listen().getAddress(), tcp.getLocalPort());
  }

  public DnsConfig config() {
    return config;
  }

  /** The zones served, {@code <namespace>.<domain>}, in the order of {@link DnsConfig#namespaces()}. */
  public List<String> zones() {
    return zones.stream().map(z -> z.origin().toString()).toList();
  }

  /** The services each zone serves now, by namespace. */
  public Map<String, List<String>> services() {
    Map<String, List<String>> out = new LinkedHashMap<>();
    zones.forEach(z -> out.put(z.namespace(), z.serviceNames()));
    return out;
  }

  /**
   * Binds the gateway's meters: {@code muster.dns.queries} by {@code type} (A, AAAA, SRV, PTR, TXT, ANY, SOA,
   * other) and {@code result} (answered, nodata, nxdomain, refused, servfail, formerr, notimp), the counters {@code
   * muster.dns.dropped}, {@code muster.dns.rate.limited}, {@code muster.dns.truncated}, {@code
   * muster.dns.tcp.refused}, and {@code muster.dns.records.rejected}: records the services' caches excluded (forged,
   * unsigned or malformed), over every service served. Pull-based: a query counts as it did before. Needs
   * micrometer-core, an optional dependency: the gateway itself runs without it ({@link DnsMeters} holds every use).
   */
  public MusterMeters.Binding bindMeters(MeterRegistry registry) {
    return DnsMeters.bind(registry, counters, this::rejectedRecords);
  }

  /** Records the served services' caches excluded (unverified or malformed), over every service. */
  long rejectedRecords() {
    ServiceDirectory d = directory;
    return d == null ? 0 : d.caches().values().stream().mapToLong(c -> c.unverifiedCount() + c.malformedCount())
        .sum();
  }

  public Stats stats() {
    DnsCounters c = counters;
    return new Stats(c.queries.sum(), c.answered.sum(), c.nodata.sum(), c.nxdomain.sum(), c.refused.sum(),
        c.formerr.sum(), c.notimp.sum(), c.truncated.sum(), c.dropped.sum(), c.rateLimited.sum(), c.slipped.sum(),
        c.tcpConnections.sum(), c.tcpRefused.sum(), c.errors.sum(), c.staleRefused.sum(), c.notAllowed.sum(),
        c.minimalAny.sum(), c.tcpPerSourceRefused.sum(), c.tcpDeadlineClosed.sum(), c.udpBytesIn.sum(),
        c.udpBytesOut.sum());
  }

  /** The reply to one query as the serving threads build it (for tests and the bench): null means dropped. */
  public byte[] answer(byte[] query, boolean udp) {
    return responder.respond(query, query.length, udp);
  }

  private void udpLoop() {
    ByteBuffer in = ByteBuffer.allocate(MAX_TCP_MESSAGE);
    while (!closed) {
      try {
        in.clear();
        InetSocketAddress from = (InetSocketAddress) udp.receive(in);
        if (from == null) {
          continue;
        }
        counters.udpBytesIn.add(in.position());
        InetAddress source = from.getAddress();
        byte[] reply;
        switch (limiter.admit(source, in.array(), in.position())) {
          case ANSWER -> reply = responder.respond(in.array(), in.position(), true, allowed(source));
          case SLIP -> {
            counters.slipped.increment();
            reply = responder.truncatedReply(in.array(), in.position());
          }
          default -> {
            counters.rateLimited.increment();
            reply = null;
          }
        }
        if (reply != null) {
          udp.send(ByteBuffer.wrap(reply), from);
          counters.udpBytesOut.add(reply.length);
        }
      } catch (ClosedChannelException e) {
        return; // close()
      } catch (IOException e) {
        if (!closed) {
          log.debug("udp: {}", e.toString()); // e.g. a send to a client that went away
        }
      } catch (RuntimeException e) {
        counters.errors.increment();
        log.warn("udp: a query failed", e);
      }
    }
  }

  private void acceptLoop() {
    while (!closed) {
      Socket s;
      try {
        s = tcp.accept();
      } catch (IOException e) {
        if (!closed) {
          log.warn("tcp accept failed: {}", e.toString());
        }
        continue;
      }
      InetAddress source = s.getInetAddress();
      if (!allowed(source)) {
        counters.notAllowed.increment();
        closeQuietly(s);
        continue;
      }
      if (perSource.merge(source, 1, Integer::sum) > config.tcpPerSource()) {
        release(source);
        counters.tcpPerSourceRefused.increment(); // a few slow clients of one host must not hold every connection
        closeQuietly(s);
        continue;
      }
      try {
        connections.execute(() -> {
          try {
            serve(s);
          } finally {
            release(source);
          }
        });
        counters.tcpConnections.increment();
      } catch (RejectedExecutionException e) {
        release(source);
        counters.tcpRefused.increment(); // more than maxTcpConnections at once: the newest is closed
        closeQuietly(s);
      }
    }
  }

  /** One connection of {@code source} less; the entry goes at 0, so that the map holds open sources only. */
  private void release(InetAddress source) {
    perSource.computeIfPresent(source, (a, n) -> n == 1 ? null : n - 1);
  }

  private boolean allowed(InetAddress source) {
    return config.allowFrom().isEmpty() || Cidr.anyContains(config.allowFrom(), source);
  }

  /**
   * One TCP connection (RFC 7766): queries with a two-byte length each, until EOF, idle timeout, a bad one, or the
   * connection's total deadline, when the timer closes the socket (a blocked read or write then ends), so a client
   * that trickles a byte now and then under the idle timeout cannot keep it.
   */
  private void serve(Socket s) {
    open.add(s);
    ScheduledFuture<?> deadline = deadlines.schedule(() -> {
      if (!s.isClosed()) {
        counters.tcpDeadlineClosed.increment();
        closeQuietly(s);
      }
    }, config.tcpDeadline().toNanos(), TimeUnit.NANOSECONDS);
    try (s) {
      s.setSoTimeout((int) Math.min(Integer.MAX_VALUE, config.tcpIdleTimeout().toMillis()));
      s.setTcpNoDelay(true);
      DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(s.getInputStream()));
      DataOutputStream out = new DataOutputStream(new java.io.BufferedOutputStream(s.getOutputStream()));
      while (!closed) {
        int length;
        try {
          length = in.readUnsignedShort();
        } catch (EOFException | SocketTimeoutException e) {
          return;
        }
        byte[] query = new byte[length];
        in.readFully(query);
        byte[] reply = responder.respond(query, length, false);
        if (reply == null) {
          return; // not a query we answer: end the connection rather than guess where the next one starts
        }
        out.writeShort(reply.length);
        out.write(reply);
        out.flush();
      }
    } catch (IOException e) {
      log.debug("tcp connection: {}", e.toString()); // reset, or a client that sent half a message and left
    } finally {
      deadline.cancel(false);
      open.remove(s);
    }
  }

  /** Stops serving, then closes the caches. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    closeQuietly(udp);
    closeQuietly(tcp);
    connections.shutdownNow();
    deadlines.shutdownNow();
    open.forEach(DnsGateway::closeQuietly); // a blocked read ends when its socket closes, not on interrupt
    try {
      for (Thread t : udpThreads) {
        t.join(5000);
      }
      acceptor.join(5000);
      connections.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    ServiceDirectory d = directory;
    if (d != null) {
      d.close(); // releases the caches' holds
    }
  }

  private static String hostPort(InetSocketAddress a) {
    String host = a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
  }

  private static void closeQuietly(AutoCloseable c) {
    if (c != null) {
      try {
        c.close();
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        log.debug("closing {}: {}", c, e.toString());
      }
    }
  }

  /** Daemon threads named {@code name}. */
  private static ThreadFactory daemon(String name) {
    return r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    };
  }

  /** Daemon threads named {@code prefix-1}, {@code prefix-2}, ... (the TCP connections' pool). */
  private static ThreadFactory numbered(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> daemon(prefix + "-" + n.incrementAndGet()).newThread(r);
  }
}
