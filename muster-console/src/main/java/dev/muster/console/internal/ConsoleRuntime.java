package dev.muster.console.internal;

import dev.muster.console.ConsoleConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The running console: the HTTP server and the threads behind it.
 *
 * <p>Threading: the service directory's own thread ({@code muster-directory}) finds namespaces and services by
 * watching their keys and opens their caches ({@link ConsoleServices}); {@code muster-console-etcd} reads leases and cluster status while viewed
 * ({@link EtcdReader}); {@code muster-console-pump} builds pages and queues them to streams ({@link Pump});
 * {@code muster-console-deadline} cuts request bodies that arrive too slowly ({@link ReadDeadline}); the
 * HTTP server's pool ({@link HttpPool}: bounded, 503 when full) answers requests and writes each stream on its own
 * thread ({@link Routes}). Each cache calls
 * its listeners through its notifier (one listener call at a time, in order, on a delivery-pool thread), not on a
 * thread of its own. Each thread owns what it writes and publishes immutable values; no lock
 * is held across I/O or a callback. {@link #start} and {@link #close} are called once each, from one thread.
 */
public final class ConsoleRuntime implements AutoCloseable {
  /** The JDK server's deadline for a request to arrive, headers and body, in seconds; read once per JVM. */
  static final String MAX_REQ_TIME = "sun.net.httpserver.maxReqTime";

  private final HttpServer server;
  private final String token;
  private final ExecutorService http;
  private final ScheduledExecutorService etcdThread;
  private final ScheduledExecutorService pumpThread;
  private final ScheduledExecutorService deadlines;
  private final ConsoleServices directory;
  private final Pump pump;
  private final ConsoleCounters counters;

  private ConsoleRuntime(HttpServer server, ExecutorService http, ScheduledExecutorService etcdThread,
      ScheduledExecutorService pumpThread, ScheduledExecutorService deadlines, ConsoleServices directory, Pump pump,
      ConsoleCounters counters, String token) {
    this.deadlines = deadlines;
    this.server = server;
    this.token = token;
    this.http = http;
    this.etcdThread = etcdThread;
    this.pumpThread = pumpThread;
    this.directory = directory;
    this.pump = pump;
    this.counters = counters;
  }

  /** Binds, lists the registry once, and serves. {@link UncheckedIOException} when the address cannot be bound. */
  public static ConsoleRuntime start(EtcdRegistry registry, EtcdMaintenance etcd, ConsoleConfig config,
      Clock clock) {
    if (System.getProperty(MAX_REQ_TIME) == null) {
      System.setProperty(MAX_REQ_TIME, String.valueOf(config.readTimeout().toSeconds()));
    }
    HttpServer server;
    try {
      server = HttpServer.create(config.listen(), 64);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + config.listen() + ": " + e.getMessage(), e);
    }
    EventRing ring = new EventRing(config.eventCapacity(), clock);
    ScheduledExecutorService pumpThread = Executors.newSingleThreadScheduledExecutor(one("muster-console-pump"));
    Pump[] pumpRef = new Pump[1];
    ConsoleServices directory = new ConsoleServices(registry, config, ring, () -> wake(pumpRef));
    EtcdReader reader = new EtcdReader(etcd, registry.config().layout(), config.leaseRefresh(),
        config.clusterRefresh(), clock);
    Pump pump = new Pump(directory, ring, reader, config.quota(), config.showLeases(), clock, pumpThread);
    pumpRef[0] = pump;
    HttpPool http = new HttpPool(config.maxClients() + 8);
    InetSocketAddress bound = server.getAddress();
    ConsoleCounters counters = new ConsoleCounters();
    String token = config.token() != null ? config.token() : randomToken();
    ScheduledExecutorService deadlines = Executors.newSingleThreadScheduledExecutor(one("muster-console-deadline"));
    new Routes(pump, ring, etcd, config, Routes.allowedHosts(bound, config.allowedHosts(), localAddresses(bound)),
        new Access(token, bound.getPort()), counters, deadlines).install(server);
    server.setExecutor(http);
    ScheduledExecutorService etcdThread = Executors.newSingleThreadScheduledExecutor(one("muster-console-etcd"));
    etcdThread.scheduleWithFixedDelay(reader::refresh, 0, 500, TimeUnit.MILLISECONDS);
    pump.start();
    server.start();
    return new ConsoleRuntime(server, http, etcdThread, pumpThread, deadlines, directory, pump, counters, token);
  }

  /** The secret every API request must show. */
  public String token() {
    return token;
  }

  private static String randomToken() {
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(random);
  }

  /** Every local interface's address when bound to the wildcard (a browser may reach it by any); else none. */
  private static List<InetAddress> localAddresses(InetSocketAddress bound) {
    if (!bound.getAddress().isAnyLocalAddress()) {
      return List.of();
    }
    List<InetAddress> out = new ArrayList<>();
    try {
      for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        out.addAll(Collections.list(n.getInetAddresses()));
      }
    } catch (SocketException e) {
      // none listed: loopback's names and --allowed-host still work
    }
    return out;
  }

  public InetSocketAddress address() {
    return server.getAddress();
  }

  public ConsoleCounters counters() {
    return counters;
  }

  /** Event streams open now. */
  public int streams() {
    return pump.clients();
  }

  /** Services watched now, over every namespace shown. */
  public int services() {
    return directory.services().size();
  }

  /** Records the watched services' caches excluded: unverified (forged or unsigned) or malformed. */
  public long rejectedRecords() {
    long n = 0;
    for (ConsoleServices.Watched w : directory.services()) {
      n += w.cache().unverifiedCount() + w.cache().malformedCount();
    }
    return n;
  }

  /** Stops serving (streams end), stops the threads, closes the caches. Idempotent. */
  @Override
  public void close() {
    pump.closeAll();
    server.stop(0);
    for (ExecutorService e : new ExecutorService[] {etcdThread, pumpThread, deadlines, http}) {
      e.shutdownNow();
    }
    for (ExecutorService e : new ExecutorService[] {etcdThread, pumpThread, deadlines, http}) {
      try {
        e.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    directory.close();
  }

  private static void wake(Pump[] pump) {
    if (pump[0] != null) { // the directory may add a service before the pump exists; the pump starts with a refresh
      pump[0].wake();
    }
  }

  private static ThreadFactory one(String name) {
    return r -> daemon(r, name);
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
