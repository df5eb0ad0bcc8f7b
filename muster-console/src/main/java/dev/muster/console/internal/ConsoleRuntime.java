package dev.muster.console.internal;

import dev.muster.console.ConsoleConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The running console: the HTTP server and the threads behind it.
 *
 * <p>Threading: the service directory's own thread ({@code muster-directory}) finds namespaces and services by
 * watching their keys and opens their caches ({@link ConsoleServices}); {@code muster-console-etcd} reads leases and cluster status while viewed
 * ({@link EtcdReader}); {@code muster-console-pump} builds pages and queues them to streams ({@link Pump}); the
 * HTTP server's pool answers requests and writes each stream on its own thread ({@link Routes}). Each cache calls
 * its listeners through its notifier (one listener call at a time, in order, on a delivery-pool thread), not on a
 * thread of its own. Each thread owns what it writes and publishes immutable values; no lock
 * is held across I/O or a callback. {@link #start} and {@link #close} are called once each, from one thread.
 */
public final class ConsoleRuntime implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService http;
  private final ScheduledExecutorService etcdThread;
  private final ScheduledExecutorService pumpThread;
  private final ConsoleServices directory;
  private final Pump pump;
  private final ConsoleCounters counters;

  private ConsoleRuntime(HttpServer server, ExecutorService http, ScheduledExecutorService etcdThread,
      ScheduledExecutorService pumpThread, ConsoleServices directory, Pump pump, ConsoleCounters counters) {
    this.server = server;
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
    Pump pump = new Pump(directory, ring, reader, config.quota(), clock, pumpThread);
    pumpRef[0] = pump;
    ExecutorService http = Executors.newFixedThreadPool(config.maxClients() + 8, numbered("muster-console-http-"));
    InetSocketAddress bound = server.getAddress();
    ConsoleCounters counters = new ConsoleCounters();
    new Routes(pump, ring, etcd, registry.config().layout(), config, bound, counters).install(server);
    server.setExecutor(http);
    ScheduledExecutorService etcdThread = Executors.newSingleThreadScheduledExecutor(one("muster-console-etcd"));
    etcdThread.scheduleWithFixedDelay(reader::refresh, 0, 500, TimeUnit.MILLISECONDS);
    pump.start();
    server.start();
    return new ConsoleRuntime(server, http, etcdThread, pumpThread, directory, pump, counters);
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
    for (ExecutorService e : new ExecutorService[] {etcdThread, pumpThread, http}) {
      e.shutdownNow();
    }
    for (ExecutorService e : new ExecutorService[] {etcdThread, pumpThread, http}) {
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

  private static ThreadFactory numbered(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> daemon(r, prefix + n.incrementAndGet());
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
