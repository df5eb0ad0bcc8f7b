package dev.muster.xds.internal;

import dev.muster.cache.CacheConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.health.Prober;
import dev.muster.internal.Json;
import dev.muster.sign.TrustedKeys;
import dev.muster.xds.XdsConfig;
import dev.muster.xds.XdsPushLatency;
import dev.muster.xds.internal.AdsStream.Outcome;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link dev.muster.xds.XdsServer}'s implementation: the gRPC server with the ADS service, the streams, the feeds and
 * the counters.
 *
 * <p>Threads: gRPC's transport threads only hand requests to the streams (the service runs on them directly); each
 * stream's work runs on its serial executor over one pool ({@code muster-xds-N}, one thread per core, at least 2);
 * caches call the feeds on their notifiers; probers on their own pools. Thread-safe.
 */
public final class XdsRuntime implements StreamHandle.Server, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(XdsRuntime.class);

  private final XdsConfig config;
  private final ServiceFeeds feeds;
  private final ExecutorService pool;
  private final Server server;
  private final Map<Long, StreamHandle> streams = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final Map<XdsType, LongAdder> responses = counters();
  private final Map<XdsType, LongAdder> nacks = counters();
  private final Map<XdsType, LongAdder> acks = counters();
  private final LongAdder bytes = new LongAdder();
  private final LongAdder refused = new LongAdder();
  private final LatencySamples pushToAck = new LatencySamples();
  private final LongAdder applied = new LongAdder();
  private final LatencySamples pushToWrite = new LatencySamples();

  private XdsRuntime(EtcdRegistry registry, XdsConfig config) {
    this.config = config;
    TrustedKeys trust = config.trustedKeys().isEmpty() ? TrustedKeys.NONE
        : TrustedKeys.builder().namespace(config.namespace(), config.trustedKeys()).build();
    this.feeds = new ServiceFeeds(config.zonePriorities(),
        service -> XdsResources.cluster(service, config.outlier(), config.failurePercentage()),
        ServiceFeeds.opener(
            (service, feed) -> registry.open(CacheConfig.builder(service).namespace(config.namespace())
                .trustedKeys(trust).build(), feed),
            config.probe() == null ? null : (service, feed) -> Prober.start(service, config.probe(),
                config.probeFactory() == null ? null : config.probeFactory().get(), null, ThreadLocalRandom::current,
                feed, e -> log.info("{} {} {}: {}", e.type().jsonName(), e.service(), e.instance(), e.detail()))),
        config.maxServices());
    int threads = Math.max(2, Runtime.getRuntime().availableProcessors());
    AtomicInteger n = new AtomicInteger();
    this.pool = new ThreadPoolExecutor(threads, threads, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, "muster-xds-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    this.server = NettyServerBuilder.forAddress(config.listen()).directExecutor().addService(
        new AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase() {
          @Override
          public StreamObserver<DiscoveryRequest> streamAggregatedResources(StreamObserver<DiscoveryResponse> out) {
            return open(out);
          }
        }).build();
  }

  /** Binds and starts serving; fails with the address when it cannot bind. */
  public static XdsRuntime start(EtcdRegistry registry, XdsConfig config) {
    XdsRuntime r = new XdsRuntime(registry, config);
    try {
      r.server.start();
    } catch (IOException e) {
      r.pool.shutdownNow();
      throw new UncheckedIOException("cannot listen on " + config.listen() + ": " + e.getMessage(), e);
    }
    log.info("serving xDS (ADS, state of the world) for namespace {} on {}", config.namespace(), r.address());
    return r;
  }

  private StreamObserver<DiscoveryRequest> open(StreamObserver<DiscoveryResponse> out) {
    StreamHandle h = new StreamHandle(ids.incrementAndGet(), this, out, pool);
    if (streams.size() >= config.maxStreams()) {
      refused.increment();
      h.refuse(Status.RESOURCE_EXHAUSTED.withDescription("this xds server serves at most " + config.maxStreams()
          + " streams (--max-streams); try another server, or later"));
      return h;
    }
    streams.put(h.id(), h);
    return h;
  }

  @Override
  public ServiceFeeds feeds() {
    return feeds;
  }

  @Override
  public void counted(Outcome o, XdsType type, String node, String refusal) {
    switch (o.kind()) {
      case ACK -> acks.get(type).increment();
      case NACK -> {
        nacks.get(type).increment();
        log.warn("{} refused its {} response: {} (that content is not sent again; the next change is)", node,
            type, Json.show(String.valueOf(refusal)));
      }
      default -> { }
    }
  }

  @Override
  public void sent(XdsType type, int size) {
    responses.get(type).increment();
    bytes.add(size);
  }

  @Override
  public void applied(long stamp) {
    pushToAck.add(System.nanoTime() - stamp);
    applied.increment();
  }

  @Override
  public void written(long stamp) {
    pushToWrite.add(System.nanoTime() - stamp);
  }

  /** From a change reaching the server to the assignment carrying it written to each stream's transport. */
  public XdsPushLatency writeLatency() {
    return pushToWrite.snapshot();
  }

  /** Assignments carrying a change that clients acknowledged, since the start. */
  public long appliedPushes() {
    return applied.sum();
  }

  /** Push-to-ACK latencies of the last acknowledged assignments. */
  public XdsPushLatency pushLatency() {
    return pushToAck.snapshot();
  }

  /** Starts the push-to-ACK samples afresh (a benchmark's next round). */
  public void clearPushLatency() {
    pushToAck.clear();
    pushToWrite.clear();
  }

  @Override
  public int maxNames() {
    return config.maxNames();
  }

  @Override
  public void refused(String node, String why) {
    refused.increment();
    log.warn("{}: stream ended: {}", node, why);
  }

  @Override
  public void closed(StreamHandle h) {
    streams.remove(h.id());
  }

  public InetSocketAddress address() {
    return (InetSocketAddress) server.getListenSockets().get(0);
  }

  public int streams() {
    return streams.size();
  }

  public int openFeeds() {
    return feeds.openFeeds();
  }

  public long responses() {
    return responses.values().stream().mapToLong(LongAdder::sum).sum();
  }

  public long responses(String type) {
    return responses.get(XdsType.valueOf(type)).sum();
  }

  public long acks() {
    return acks.values().stream().mapToLong(LongAdder::sum).sum();
  }

  public long nacks() {
    return nacks.values().stream().mapToLong(LongAdder::sum).sum();
  }

  public long bytesSent() {
    return bytes.sum();
  }

  public long refusedStreams() {
    return refused.sum();
  }

  /** Stops accepting, ends every stream, closes the feeds (their cache holds) and the pool; the registry stays. */
  @Override
  public void close() {
    server.shutdownNow();
    try {
      if (!server.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("the xds server's transport did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    feeds.close();
    pool.shutdownNow();
  }

  private static Map<XdsType, LongAdder> counters() {
    Map<XdsType, LongAdder> m = new EnumMap<>(XdsType.class);
    for (XdsType t : XdsType.values()) {
      m.put(t, new LongAdder());
    }
    return m;
  }
}
