package dev.muster.etcd;

import dev.muster.InvalidInputException;
import dev.muster.MusterException;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.etcd.internal.EtcdConnection;
import dev.muster.etcd.internal.EtcdListings;
import dev.muster.etcd.internal.NamespaceKeys;
import dev.muster.internal.Backoff;
import dev.muster.registry.Names;
import dev.muster.sign.TrustedKey;
import dev.muster.sign.TrustedKeys;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * How the set of services is kept (issue 34, item 4; as every cache: range, then watch from the range's revision):
 *
 *   LISTING  --keys-only range of each prefix ok (revision R)-->  WATCHING from R + 1 (diffs the services first)
 *   LISTING  --range fails-->                                     LISTING again after backoff (listener.listing)
 *   WATCHING --PUT of a key of a service not yet known-->         added(service): its cache opened
 *   WATCHING --DELETE of a service's last key-->                  removed(service): its cache closed
 *   WATCHING --watch error / completed / compacted-->             LISTING after backoff
 *   WATCHING --the connection replaced its client-->              LISTING (a watch on a closed client hears nothing)
 *   WATCHING --every relistInterval-->                            LISTING (a check of the watch, as a cache's audit)
 *
 * etcd has no keys-only watch: events carry values (about 150 B each), dropped at once (NamespaceKeys keeps keys).
 * The only periodic work against etcd is the relist, every relistInterval (5 min), not a listing every second.
 *
 * Threads: one daemon thread ("muster-directory") makes every state change, listener call, cache open and close;
 * jetcd's callbacks only hand it their response, tagged with the watch's generation (an older one's is dropped). No
 * lock: caches() and namespaces() read immutable copies published through volatile fields.
 */
/**
 * Every service of some namespaces (or of the whole registry), as services come and go, each with a hold on its
 * shared endpoint cache ({@link EtcdRegistry#open}): the one way the DNS gateway and the console find what to serve.
 * A service appears with its first key and leaves with its last; the directory reads the namespaces' keys once (keys
 * only), then watches them, and calls its {@link Listener} as services appear and leave.
 *
 * <p>Thread-safe: {@link #caches()}, {@link #namespaces()}, {@link #awaitListed} and {@link #close()} may be called
 * from any thread. The listener is called on the directory's own thread ({@code muster-directory}), one call at a
 * time; it must not block for long.
 */
public final class ServiceDirectory implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ServiceDirectory.class);
  /** The default {@link Builder#relistInterval}. */
  public static final Duration DEFAULT_RELIST = Duration.ofMinutes(5);
  /** How often the watch's client is checked against the connection's current one (a local check). */
  private static final Duration CLIENT_CHECK = Duration.ofSeconds(1);

  /** One service of one namespace. */
  public record Service(String namespace, String service) implements Comparable<Service> {
    public Service {
      Names.requireValid("namespace", namespace);
      Names.requireValid("service", service);
    }

    /** {@code namespace/service}. */
    public String path() {
      return namespace + "/" + service;
    }

    @Override
    public int compareTo(Service o) {
      int c = namespace.compareTo(o.namespace);
      return c != 0 ? c : service.compareTo(o.service);
    }
  }

  /** What the directory tells its user; every call on the directory's thread. */
  public interface Listener {
    /**
     * {@code service} appeared (its first key): return the listener its cache gets (it receives the current set
     * first), or null for none. The cache is opened right after. {@link #namespaces()} already includes its
     * namespace; {@link #caches()} includes the service once its cache is open.
     */
    EndpointListener added(Service service);

    /** {@code service} left (its last key is gone); its hold is released right after. */
    default void removed(Service service) {}

    /**
     * Reading the services fails since {@code failedSince} ({@code problem} says why): the set the directory holds
     * may be out of date; it retries with backoff. Called again with nulls once a read succeeds.
     */
    default void listing(Instant failedSince, String problem) {}
  }

  private final EtcdRegistry registry;
  private final EtcdConnection connection;
  private final List<String> namespacesAsked; // empty: every namespace
  private final UnaryOperator<CacheConfig.Builder> configure;
  private final List<TrustedKey> trusted;
  private final Listener listener;
  private final Duration relistInterval;
  private final Clock clock;
  private final ScheduledExecutorService thread;
  private final Backoff backoff;
  private final CountDownLatch listed = new CountDownLatch(1);
  private final AtomicLong listings = new AtomicLong();
  private final AtomicLong watchEvents = new AtomicLong();

  // The directory thread's.
  private final NamespaceKeys<Service> keys;
  private final Map<Service, EndpointCache> open = new TreeMap<>();
  private final List<Watch.Watcher> watchers = new ArrayList<>();
  private long generation;
  private Client watchClient;
  private int failures;
  private Instant failingSince;
  private ScheduledFuture<?> pending;
  private boolean closed;

  private volatile Map<Service, EndpointCache> published = Map.of();
  private volatile SortedSet<String> namespaces = Collections.emptySortedSet();

  private ServiceDirectory(Builder b) {
    this.registry = b.registry;
    this.connection = registry.connection();
    this.keys = new NamespaceKeys<>(connection.config().layout().rootPrefix(), Service::new);
    this.namespacesAsked = List.copyOf(b.namespaces);
    this.configure = b.configure;
    this.trusted = b.trusted;
    this.listener = b.listener;
    this.relistInterval = b.relistInterval;
    this.clock = b.clock;
    ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
      Thread th = new Thread(r, "muster-directory");
      th.setDaemon(true);
      return th;
    });
    t.setRemoveOnCancelPolicy(true);
    this.thread = t;
    this.backoff = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5), new SecureRandom());
  }

  /** A directory of {@code registry}'s services, for {@code listener}; configure it, then {@link Builder#start()}. */
  public static Builder builder(EtcdRegistry registry, Listener listener) {
    return new Builder(registry, listener);
  }

  /**
   * Waits until the services were read once and their caches opened (not their first sets: await those on the
   * caches); false on timeout.
   */
  public boolean awaitListed(Duration timeout) {
    try {
      return listed.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** The services held now and each one's cache, ordered by namespace then service. Immutable. */
  public Map<Service, EndpointCache> caches() {
    return published;
  }

  /** The namespaces with at least one service now (the configured ones when some were given). */
  public SortedSet<String> namespaces() {
    return namespaces;
  }

  /** How many keys-only listings the directory made (the first, relists, and after errors): its load on etcd. */
  public long listings() {
    return listings.get();
  }

  /** How many watch events it received. */
  public long watchEvents() {
    return watchEvents.get();
  }

  /** Stops watching and releases every cache's hold (the listener hears no removal). Idempotent. */
  @Override
  public void close() {
    try {
      thread.submit(this::shutDown).get(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.RejectedExecutionException | java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException e) {
      log.debug("closing the service directory: {}", e.toString());
    }
    thread.shutdownNow();
  }

  // ---- the directory thread --------------------------------------------------------------------

  private void shutDown() {
    if (closed) {
      return;
    }
    closed = true;
    cancelWatches();
    cancelPending();
    List<EndpointCache> holds = new ArrayList<>(open.values());
    open.clear();
    published = Map.of();
    holds.forEach(EndpointCache::close);
  }

  private void list() {
    if (closed) {
      return;
    }
    cancelWatches();
    List<String> now = new ArrayList<>();
    long revision = Long.MAX_VALUE;
    Client client;
    try {
      client = connection.client();
      for (String prefix : prefixes()) {
        EtcdListings.KeysAt at = EtcdListings.keys(connection, prefix);
        listings.incrementAndGet();
        revision = Math.min(revision, at.revision()); // watch every prefix from the oldest: a repeat is harmless
        now.addAll(at.keys());
      }
    } catch (MusterException | IllegalStateException e) {
      listingFailed(e.getMessage());
      return;
    } catch (RuntimeException e) {
      log.error("reading the services failed unexpectedly", e);
      listingFailed(e.toString());
      return;
    }
    if (failingSince != null) {
      log.info("reading the registry's services works again");
      failingSince = null;
      call(() -> listener.listing(null, null));
    }
    failures = 0;
    keys.reset(now);
    reconcile();
    listed.countDown();
    watch(client, revision + 1);
    schedule(this::list, relistInterval);
  }

  private void listingFailed(String problem) {
    if (failingSince == null) {
      failingSince = clock.instant();
      log.warn("cannot read the registry's services (serving what the caches hold; retrying): {}", problem);
    }
    Instant since = failingSince;
    call(() -> listener.listing(since, problem));
    schedule(this::list, backoff.delay(failures++));
  }

  private void watch(Client client, long fromRevision) {
    long gen = ++generation;
    watchClient = client;
    WatchOption.Builder option = WatchOption.builder().withRevision(fromRevision).withPrevKV(false)
        .withRequireLeader(true);
    for (String prefix : prefixes()) {
      ByteSequence key = ByteSequence.from(prefix, StandardCharsets.UTF_8);
      Watch.Listener l = new Watch.Listener() {
        @Override
        public void onNext(WatchResponse response) {
          onThread(gen, () -> events(response));
        }

        @Override
        public void onError(Throwable error) {
          onThread(gen, () -> watchEnded("the watch of " + prefix + " failed: " + error));
        }

        @Override
        public void onCompleted() {
          onThread(gen, () -> watchEnded("the watch of " + prefix + " ended"));
        }
      };
      try {
        watchers.add(client.getWatchClient().watch(key, option.isPrefix(true).build(), l));
      } catch (RuntimeException e) {
        watchEnded("could not watch " + prefix + ": " + e);
        return;
      }
    }
    checkClient(gen);
  }

  /** The connection replaces its client after failures; a watch on the old one would hear nothing more. */
  private void checkClient(long gen) {
    if (gen != generation || closed) {
      return;
    }
    if (!connection.isCurrent(watchClient)) {
      watchEnded("the etcd client was replaced");
      return;
    }
    thread.schedule(() -> checkClient(gen), CLIENT_CHECK.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void watchEnded(String why) {
    if (closed) {
      return;
    }
    log.info("service directory: {}; reading the keys again", why);
    cancelWatches();
    schedule(this::list, backoff.delay(failures++));
  }

  private void events(WatchResponse response) {
    boolean changed = false;
    for (WatchEvent e : response.getEvents()) {
      watchEvents.incrementAndGet();
      String key = e.getKeyValue().getKey().toString(StandardCharsets.UTF_8);
      if (e.getEventType() == WatchEvent.EventType.PUT) {
        changed |= keys.put(key);
      } else if (e.getEventType() == WatchEvent.EventType.DELETE) {
        changed |= keys.delete(key);
      }
    }
    if (changed) {
      reconcile();
    }
  }

  /**
   * Opens the caches of services that appeared and releases those of services gone. The namespaces are published
   * first, so that a listener told of a change, and anyone it tells, reads them as they now are; {@link #caches()}
   * includes a new service once its cache is open (after {@code added} returned its listener).
   */
  private void reconcile() {
    SortedSet<String> nss = new TreeSet<>(namespacesAsked);
    keys.services().forEach(s -> nss.add(s.namespace()));
    if (!nss.equals(namespaces)) {
      namespaces = Collections.unmodifiableSortedSet(nss);
    }
    boolean changed = false;
    for (Service s : List.copyOf(open.keySet())) {
      if (!keys.services().contains(s)) {
        EndpointCache hold = open.remove(s);
        call(() -> listener.removed(s));
        hold.close();
        log.info("service {} is gone: its cache is released", s.path());
        changed = true;
      }
    }
    for (Service s : new TreeSet<>(keys.services())) {
      if (!open.containsKey(s)) {
        EndpointListener[] l = new EndpointListener[1];
        call(() -> l[0] = listener.added(s));
        CacheConfig.Builder cb = CacheConfig.builder(s.service()).namespace(s.namespace());
        if (!trusted.isEmpty()) {
          cb.trustedKeys(TrustedKeys.builder().service(s.namespace(), s.service(), trusted).build());
        }
        CacheConfig config = configure.apply(cb).build();
        open.put(s, l[0] == null ? registry.open(config) : registry.open(config, l[0]));
        log.info("watching service {}", s.path());
        changed = true;
      }
    }
    if (changed) {
      published = Collections.unmodifiableMap(new TreeMap<>(open));
    }
  }

  private List<String> prefixes() {
    var layout = connection.config().layout();
    return namespacesAsked.isEmpty() ? List.of(layout.rootPrefix())
        : namespacesAsked.stream().map(layout::namespacePrefix).toList();
  }

  private void onThread(long gen, Runnable task) {
    try {
      thread.execute(() -> {
        if (gen == generation && !closed) {
          task.run();
        }
      });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closed
    }
  }

  private void cancelWatches() {
    generation++;
    for (Watch.Watcher w : watchers) {
      try {
        w.close();
      } catch (RuntimeException e) {
        log.debug("closing a directory watch: {}", e.toString());
      }
    }
    watchers.clear();
  }

  private void schedule(Runnable step, Duration delay) {
    cancelPending();
    pending = thread.schedule(step, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void cancelPending() {
    if (pending != null) {
      pending.cancel(false);
      pending = null;
    }
  }

  private void call(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("the service directory's listener threw; ignored", e);
    }
  }

  /** Settings; {@link #start()} reads the services once on the directory's thread, then watches them. */
  public static final class Builder {
    private final EtcdRegistry registry;
    private final Listener listener;
    private List<String> namespaces = List.of();
    private UnaryOperator<CacheConfig.Builder> configure = b -> b;
    private List<TrustedKey> trusted = List.of();
    private Duration relistInterval = DEFAULT_RELIST;
    private Clock clock = Clock.systemUTC();

    private Builder(EtcdRegistry registry, Listener listener) {
      this.registry = Objects.requireNonNull(registry, "registry");
      this.listener = Objects.requireNonNull(listener, "listener");
    }

    /** The namespaces to serve; none (the default) serves every namespace in the registry, as it comes and goes. */
    public Builder namespaces(List<String> namespaces) {
      List<String> copy = List.copyOf(namespaces);
      copy.forEach(ns -> Names.requireValid("namespace", ns));
      this.namespaces = List.copyOf(new TreeSet<>(copy));
      return this;
    }

    /**
     * Adjusts each service's cache config (trusted keys, a listener executor) beyond namespace and service. Keep it
     * a function of the service alone: equal configs share one cache with the rest of the process.
     */
    public Builder cache(UnaryOperator<CacheConfig.Builder> configure) {
      this.configure = Objects.requireNonNull(configure, "configure");
      return this;
    }

    /**
     * Every service's cache serves only records signed by one of {@code keys} (none, the default: not checked): an
     * unsigned or forged record never reaches the listener.
     */
    public Builder trustedKeys(List<TrustedKey> keys) {
      this.trusted = List.copyOf(keys);
      return this;
    }

    /**
     * How often the keys are read again while the watch runs: a check of the watch, as each cache's audit is
     * (default {@link #DEFAULT_RELIST}); at least 1 s.
     */
    public Builder relistInterval(Duration interval) {
      if (interval == null || interval.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new InvalidInputException("relistInterval", interval, "use 1s or more, such as 5m");
      }
      this.relistInterval = interval;
      return this;
    }

    /** The clock of {@link Listener#listing}'s times (default the system's). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Starts it: the first read runs at once on the directory's thread; {@link #awaitListed} waits for it. */
    public ServiceDirectory start() {
      ServiceDirectory d = new ServiceDirectory(this);
      d.thread.execute(d::list);
      return d;
    }
  }
}
