package dev.muster.etcd.internal;

import com.google.protobuf.ByteString;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.internal.CacheDriver;
import dev.muster.cache.internal.CacheDriver.CacheIoException;
import dev.muster.cache.internal.CacheDriver.Header;
import dev.muster.cache.internal.CacheDriver.StreamError;
import dev.muster.cache.internal.CacheNotifier;
import dev.muster.cache.internal.CacheRecord;
import dev.muster.cache.internal.FileSnapshotStore;
import dev.muster.cache.internal.RevisionApplier;
import dev.muster.cache.internal.SnapshotStore;
import dev.muster.internal.Backoff;
import dev.muster.internal.DeliveryPool;
import dev.muster.internal.ListenerExecutor;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Longer than our 500-line guide: the cache's runtime (loop, notifier, timers) and the driver's I/O (paged ranges,
 * the watch on the connection's stream and its moves, the audit's reads) share the loop's state; the watch stream
 * itself is WatchStream.
 */
/**
 * The endpoint cache on etcd: {@link CacheDriver}'s I/O done with jetcd (ranges) and {@link WatchStream} (the
 * watch).
 *
 * <ul>
 *   <li>range: paged ({@code pageSize} keys, sorted by key), every page after the first pinned to the first page's
 *       revision, so the snapshot is one consistent applier; page N + 1 is requested before page N is decoded, so
 *       decoding overlaps the next round trip (issue 19 §3);
 *   <li>watch: from the revision the driver asks for, with {@code requireLeader} (a member that lost quorum
 *       ends the stream instead of going silent) and progress notifications, on the connection's one
 *       {@link WatchStream} per client, shared with every other cache (docs/design-memory.md, section 1). Each
 *       watch is tagged with the driver's stream number, and a response reaches the driver only while its watch is
 *       this cache's current one. When the stream it is on has retired, the cache's next progress request moves it
 *       (a cancel there, a create at the checkpoint on the open stream, same driver stream number): responses still
 *       queued from the old watch are dropped, so nothing is applied out of order, and nothing is missed, since the
 *       new watch replays from the checkpoint;
 *   <li>reconnect: {@link EtcdConnection#reset} of the client this cache last used, when the driver says the
 *       connection itself is in doubt (our backoff, not grpc-java's). The connection is shared: a client another
 *       cache or registration already replaced is not replaced again.
 * </ul>
 *
 * <h2>Threading</h2>
 * Two sequential executors over the process's {@link DeliveryPool} (issue 19 §2), not threads of its own:
 * <ul>
 *   <li>the <b>loop</b> runs the driver and every etcd call: each driver input, each timer (handed over by the
 *       pool's timer thread) and each jetcd or {@link WatchStream} callback (which only hops onto it), one at a time,
 *       in order. A range's waits for its pages, and a watch that has to open its client's stream first, are its
 *       only blocking calls (at most the request timeout each); each runs as a managed blocker, so it never holds up
 *       another cache;
 *   <li>the <b>notifier</b> runs the listeners through a {@link CacheNotifier}, one call at a time, in order, so a
 *       slow listener never delays the cache (the notifier coalesces publications it falls behind on). With a
 *       {@link CacheConfig#listenerExecutor()} it is a sequential executor over that one instead, so listeners that
 *       block hold the user's threads, not the pool's; same order, same one call at a time. The cache never shuts
 *       it down; if it refuses a task, or drops one it had queued (shutdownNow), the notifier moves to the pool for
 *       good with one WARN ({@link ListenerExecutor}), and no event is lost.
 * </ul>
 * So a watch event costs two hand-overs (gRPC's thread to the loop, the loop to the notifier), as before, but onto
 * pool threads that are usually running already: 100 caches share a few threads instead of owning 200. Each task
 * sees the effects of the one before it on its executor, whatever thread ran it, so the loop's state needs no lock.
 * After {@link #close()} queued loop tasks and timers are dropped. {@link #current()} is a volatile read.
 */
public final class EtcdEndpointCache implements EndpointCache {
  private static final Logger log = LoggerFactory.getLogger(EtcdEndpointCache.class);
  /** The reconnect jitter's draws, shared by every cache (thread-safe; 80 B a cache when each had its own). */
  private static final SecureRandom BACKOFF_RANDOM = new SecureRandom();

  private final EtcdConnection connection;
  private final CacheConfig config;
  private final String prefix;
  private final Executor loop;
  private final Executor notifyExecutor;
  private final RevisionApplier applier;
  private final CacheDriver driver;
  private final CacheNotifier listeners;
  /** The first set (true) or a failure (false): awaitReady's end. One future, not two latches: 24 B, not 96. */
  private final CompletableFuture<Boolean> settled = new CompletableFuture<>();
  private volatile EndpointSet current = EndpointSet.EMPTY;
  private volatile boolean closed;
  /** Set once close() has run the driver's close: the notifier then takes no new task (adding a listener fails). */
  private volatile boolean notifierClosed;
  private Consumer<EndpointCache> onClosed = cache -> { };
  private volatile long malformed;
  private volatile long unverified;

  private EtcdEndpointCache(EtcdConnection connection, CacheConfig config, CacheDriver.ResumeRule rule, Clock clock,
      RandomGenerator backoffRandom) {
    this.connection = connection;
    this.config = config;
    var layout = connection.config().layout();
    this.prefix = config.version() == null ? layout.servicePrefix(config.namespace(), config.service())
        : layout.versionPrefix(config.namespace(), config.service(), config.version());
    this.loop = DeliveryPool.sequential();
    ListenerExecutor own = config.listenerExecutor() == null ? null // never shut down by the cache
        : DeliveryPool.listenerExecutor(config.listenerExecutor(), config.service());
    Executor notifier = own == null ? DeliveryPool.sequential() : DeliveryPool.sequential(own);
    this.notifyExecutor = task -> {
      if (notifierClosed) {
        throw new RejectedExecutionException("the endpoint cache of " + config.service() + " is closed");
      }
      if (own != null) {
        own.rescueDropped(); // a worker its executor's shutdownNow() dropped: the pool runs it, with this task
      }
      notifier.execute(task);
    };
    this.listeners = new CacheNotifier(notifyExecutor, config.service());
    SnapshotStore store = config.snapshotFile() == null ? SnapshotStore.NONE
        : new FileSnapshotStore(config.snapshotFile());
    this.applier = new RevisionApplier(layout, prefix, config.trustedKeys());
    this.driver = new CacheDriver(config, rule, applier, new JetcdIo(), this::schedule, clock,
        System::nanoTime, new Backoff(config.backoffBase(), config.backoffCap(),
            backoffRandom == null ? BACKOFF_RANDOM : backoffRandom),
        new ToListeners(), store);
  }

  /**
   * Creates the cache and starts it: the first range runs on the cache's thread right away. {@code onClosed} runs
   * once, on the thread that closes the cache, after it has closed. {@code backoffRandom} draws the reconnect
   * jitter; null for the caches' shared {@link SecureRandom} (only the lab's jitter-off control passes one).
   */
  public static EtcdEndpointCache start(EtcdConnection connection, CacheConfig config, CacheDriver.ResumeRule rule,
      Clock clock, RandomGenerator backoffRandom, List<EndpointListener> listeners, Consumer<EndpointCache> onClosed) {
    return start(connection, config, rule, clock, backoffRandom, 0, listeners, onClosed);
  }

  /**
   * As above; {@code dropRevision} &gt; 0 makes the cache drop the n-th revision its watches deliver, before the
   * applier: the audit's negative control ({@link NegativeControls#watchDroppingRevision}).
   */
  public static EtcdEndpointCache start(EtcdConnection connection, CacheConfig config, CacheDriver.ResumeRule rule,
      Clock clock, RandomGenerator backoffRandom, long dropRevision, List<EndpointListener> listeners,
      Consumer<EndpointCache> onClosed) {
    EtcdEndpointCache cache = new EtcdEndpointCache(connection, config, rule, clock, backoffRandom);
    cache.driver.dropRevisionForNegativeControl(dropRevision); // before the loop's first task, which publishes it
    cache.onClosed = java.util.Objects.requireNonNull(onClosed, "onClosed");
    listeners.forEach(cache.listeners::add);
    cache.onLoop(cache.driver::start);
    return cache;
  }

  @Override
  public Optional<CacheConfig> config() {
    return Optional.of(config);
  }

  @Override
  public EndpointSet current() {
    return current;
  }

  @Override
  public boolean isStale() {
    return driver.isStale();
  }

  @Override
  public Optional<Instant> staleSince() {
    return driver.staleSince();
  }

  @Override
  public Duration lastEventAge() {
    return driver.lastEventAge();
  }

  @Override
  public long resyncCount() {
    return driver.resyncCount();
  }

  @Override
  public long auditCount() {
    return driver.auditCount();
  }

  @Override
  public long auditDifferenceCount() {
    return driver.auditDifferenceCount();
  }

  @Override
  public long malformedCount() {
    return malformed;
  }

  @Override
  public long unverifiedCount() {
    return unverified;
  }

  @Override
  public Optional<dev.muster.MusterException> failure() {
    return driver.failure();
  }

  @Override
  public boolean awaitReady(Duration timeout) {
    try {
      return settled.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
      return false;
    }
  }

  @Override
  public void addListener(EndpointListener listener) {
    listeners.add(listener);
  }

  @Override
  public void removeListener(EndpointListener listener) {
    listeners.remove(listener);
  }

  /** The watched prefix, e.g. {@code /muster/default/orders/}. */
  public String prefix() {
    return prefix;
  }

  /**
   * Waits up to 5 s for the loop to close the driver (cancel the watch). An interrupt ends that wait early, the cache
   * still closes, and the interrupt flag stays set for the caller.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true; // from now on queued loop tasks and timers are dropped; this one is not
    CompletableFuture<Void> done = new CompletableFuture<>();
    loop.execute(() -> {
      try {
        driver.close(); // cancels the watch (the driver closes its stream)
        done.complete(null);
      } catch (RuntimeException e) {
        done.completeExceptionally(e);
      }
    });
    try {
      done.get(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the loop still closes the driver; we only stop waiting for it
      log.debug("closing the cache of {}: interrupted while the loop closed the watch", config.service());
    } catch (ExecutionException e) {
      log.debug("closing the cache of {}: {}", config.service(), e.getCause().toString());
    } catch (TimeoutException e) {
      log.debug("closing the cache of {}: the loop did not close the watch within 5 s", config.service());
    }
    notifierClosed = true; // notices already queued are still delivered
    onClosed.accept(this);
  }

  // ---- plumbing ------------------------------------------------------------------------------------

  /**
   * The driver's timer: the pool's timer thread hands {@code task} to the loop when due. The returned cancel runs on
   * the loop (as every driver call does), so a task already handed over but not yet run is skipped by its flag.
   */
  private Runnable schedule(Runnable task, Duration delay) {
    if (closed) {
      return () -> { };
    }
    LoopTimer timer = new LoopTimer(task);
    timer.future = DeliveryPool.schedule((java.util.concurrent.Callable<Void>) timer, delay.toNanos());
    return timer;
  }

  /**
   * One timer task of the cache, and its cancel handle ({@link #run()}): when due, the timer thread hands {@code
   * task} to the loop, which runs it unless it was cancelled first. One object where a flag array, two lambdas and
   * the executor's adapter were (about 70 B for each of a cache's waiting timers). {@code cancelled} and {@code
   * future} are the loop's: the schedule, the cancel and the run all happen there.
   */
  private final class LoopTimer implements java.util.concurrent.Callable<Void>, Runnable {
    private final Runnable task;
    private boolean cancelled;
    private ScheduledFuture<?> future;

    LoopTimer(Runnable task) {
      this.task = task;
    }

    /** Due: onto the loop. */
    @Override
    public Void call() {
      onLoop(this::fire);
      return null;
    }

    private void fire() {
      if (!cancelled) {
        task.run();
      }
    }

    /** The cancel handle the driver keeps. */
    @Override
    public void run() {
      cancelled = true;
      future.cancel(false);
    }
  }

  /** Runs {@code task} on the loop, unless the cache is closed (then it and every task still queued are dropped). */
  private void onLoop(Runnable task) {
    if (closed) {
      return;
    }
    try {
      loop.execute(() -> {
        if (!closed) {
          runSafely(task);
        }
      });
    } catch (RejectedExecutionException e) {
      // the pool refused (JVM shutting down): nothing more will run
    }
  }

  private void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("endpoint cache of {} failed a step; it keeps running", config.service(), e);
    }
  }

  /** Hands the driver's publications to the listeners' notifier. Runs on the loop. */
  private final class ToListeners implements CacheDriver.Publisher {
    @Override
    public void publish(EndpointSet set, EndpointDelta delta) {
      current = set;
      malformed = applier.malformedCount(); // the loop: the applier's owner
      unverified = applier.unverifiedCount();
      settled.complete(true);
      listeners.publish(set, delta);
    }

    @Override
    public void failed(EndpointSet set, dev.muster.MusterException why) {
      settled.complete(false);
      listeners.failed(set, why);
    }

    @Override
    public void stale(EndpointSet set, Instant since, String reason) {
      listeners.stale(set, since, reason);
    }

    @Override
    public void recovered(EndpointSet set, Duration staleFor) {
      listeners.recovered(set, staleFor);
    }

    @Override
    public void held(EndpointSet kept, int wouldRemove, Duration holdFor) {
      log.warn("mass-removal guard: one change would remove {} of {} instances of {}; keeping the last good set"
          + " for up to {} ms", wouldRemove, kept.size(), config.service(), holdFor.toMillis());
    }
  }

  /**
   * The driver's I/O: ranges and the audit's reads through jetcd, the watch on the connection's {@link WatchStream}.
   * Every method runs on the loop; the {@link WatchStream.Target} methods run on gRPC's thread and only hand over.
   */
  private final class JetcdIo implements CacheDriver.Io, WatchStream.Target {
    /** The client of the last range, watch or progress request: the one a failure report is about. */
    private Client used;
    /** When that attempt started ({@link System#nanoTime()}): any success on {@code used} after it outvotes it. */
    private long attemptStartedNanos;
    /** The watch of driver stream {@link #watchFor}, or null. Loop only. */
    private WatchStream.Watch watch;
    private long watchFor;
    /**
     * The jetcd watcher of driver stream {@link #watchFor}, instead of {@link #watch}, when the server gives watch
     * ids of its own (etcd's grpc-proxy: see {@link WatchStream#givesOwnIds()}). Loop only.
     */
    private Watch.Watcher jetcdWatcher;

    private Client attempt() {
      used = connection.client();
      attemptStartedNanos = System.nanoTime();
      return used;
    }

    /**
     * Pages of {@link CacheConfig#pageSize()} keys, every one after the first pinned to the first page's revision.
     * Page N + 1 is requested as soon as page N arrives, before {@code pages} decodes N, so decoding overlaps the
     * next round trip. Only the waits for a page block the loop, each for at most the request timeout, as a managed
     * blocker (see the class comment); decoding runs as ordinary work of the loop.
     */
    @Override
    public CacheDriver.Range range(CacheDriver.Pages pages) {
      Client client = attempt();
      ByteSequence end = prefixEnd(prefix);
      long revision = 0;
      long clusterId = 0;
      int records = 0;
      CompletableFuture<GetResponse> next = requestPage(client, bytes(prefix), end, 0);
      try {
        while (next != null) {
          CompletableFuture<GetResponse> asked = next;
          GetResponse page = DeliveryPool.blocking(() -> awaitPage(asked));
          connection.succeeded(client);
          next = null;
          if (revision == 0) {
            revision = page.getHeader().getRevision();
            clusterId = page.getHeader().getClusterId();
          }
          List<KeyValue> kvs = page.getKvs();
          if (page.isMore() && !kvs.isEmpty()) {
            byte[] lastKey = kvs.get(kvs.size() - 1).getKey().getBytes();
            byte[] after = Arrays.copyOf(lastKey, lastKey.length + 1); // the smallest key after it
            next = requestPage(client, ByteSequence.from(after), end, revision);
          }
          List<CacheRecord> decoded = new ArrayList<>(kvs.size());
          for (KeyValue kv : kvs) {
            decoded.add(CacheRecord.put(kv.getKey().toString(StandardCharsets.UTF_8), kv.getValue().getBytes(),
                kv.getModRevision(), kv.getLease()));
          }
          pages.page(revision, decoded);
          records += decoded.size();
        }
      } finally {
        if (next != null) {
          next.cancel(true); // abandoned (a page did not decode into trust, or the loop failed): not awaited
        }
      }
      return new CacheDriver.Range(revision, clusterId, records);
    }

    private CompletableFuture<GetResponse> requestPage(Client client, ByteSequence from, ByteSequence end,
        long revision) {
      GetOption.Builder option = GetOption.builder().withRange(end).withLimit(config.pageSize())
          .withSortField(GetOption.SortTarget.KEY).withSortOrder(GetOption.SortOrder.ASCEND);
      if (revision != 0) {
        option.withRevision(revision); // every later page pinned to the first page's revision
      }
      try {
        return client.getKVClient().get(from, option.build());
      } catch (RuntimeException e) { // e.g. the client was closed meanwhile: answered like a failed page
        return CompletableFuture.failedFuture(e);
      }
    }

    private GetResponse awaitPage(CompletableFuture<GetResponse> page) {
      try {
        return EtcdOps.await("range " + prefix, page, config.requestTimeout());
      } catch (EtcdOps.EtcdCallException e) {
        if (e.kind() != EtcdErrors.Kind.UNAVAILABLE || EtcdErrors.isNoLeader(e)) {
          connection.succeeded(used); // etcd answered: a refusal or "no leader" proves the connection
        }
        if (e.kind() == EtcdErrors.Kind.DENIED || e.kind() == EtcdErrors.Kind.UNAUTHENTICATED) {
          throw new CacheIoException(EtcdErrors.accessDenied(connection.config(), e.kind(), "watch " + prefix,
              "read on " + prefix, e.getCause()));
        }
        throw new CacheIoException(e.getMessage(), e,
            e.kind() == EtcdErrors.Kind.UNAVAILABLE && !EtcdErrors.isNoLeader(e));
      }
    }

    @Override
    public void watch(long stream, long fromRevision) {
      WatchStream watches;
      try {
        watches = connection.watchStream();
        used = watches.client();
        attemptStartedNanos = System.nanoTime();
      } catch (RuntimeException e) {
        onLoop(() -> failed(stream, e));
        return;
      }
      if (watches.givesOwnIds()) {
        watchThroughJetcd(watches.client(), stream, fromRevision);
        return;
      }
      open(watches, stream, fromRevision, null);
    }

    /**
     * The watch as before {@link WatchStream}, on a stream of jetcd's own: for a server that ignores the create's
     * {@code watch_id} (etcd's grpc-proxy), where a shared stream could take only one create at a time, and a
     * proxy fleet's 2,500 re-creates after a stall took minutes. Every jetcd watcher is closed by us on the first
     * error, and tagged with the driver's stream number, so jetcd's own 500 ms resume can never feed the cache.
     */
    private void watchThroughJetcd(Client client, long stream, long fromRevision) {
      WatchOption.Builder option = WatchOption.builder().withRange(prefixEnd(prefix))
          .withProgressNotify(true).withRequireLeader(true).withCreateNotify(true).withPrevKV(false);
      if (fromRevision > 0) {
        option.withRevision(fromRevision);
      }
      Watch.Listener listener = new Watch.Listener() {
        @Override
        public void onNext(io.etcd.jetcd.watch.WatchResponse response) {
          connection.succeeded(client); // on jetcd's thread: lock-free, one volatile write at most
          onLoop(() -> dispatchJetcd(stream, response));
        }

        @Override
        public void onError(Throwable error) {
          onLoop(() -> failed(stream, error));
        }

        @Override
        public void onCompleted() {
          onLoop(() -> driver.onClosed(stream));
        }
      };
      try {
        jetcdWatcher = client.getWatchClient().watch(bytes(prefix), option.build(), listener);
        watchFor = stream;
        if (!connection.isCurrent(client)) {
          // replaced meanwhile: jetcd 0.8.6 may hand back a watcher it never starts (docs/etcd-watch-bugs.md)
          onLoop(() -> driver.onError(stream, StreamError.UNAVAILABLE, 0,
              "the shared etcd client was replaced while this watch was opened"));
        }
      } catch (RuntimeException e) {
        onLoop(() -> failed(stream, e));
      }
    }

    /** Creates the watch of driver stream {@code stream} on {@code watches}, moving {@code from} when not null. */
    private void open(WatchStream watches, long stream, long fromRevision, WatchStream.Watch from) {
      watch = null;
      try {
        watch = from == null ? watches.watch(create(fromRevision), this, config.requestTimeout())
            : watches.move(from, create(fromRevision), config.requestTimeout());
        watchFor = stream;
      } catch (RuntimeException e) {
        onLoop(() -> failed(stream, e));
      }
    }

    /** The create the jetcd path sent: the prefix, from {@code fromRevision} (0: now), progress notifications. */
    private WatchCreateRequest.Builder create(long fromRevision) {
      return WatchCreateRequest.newBuilder().setKey(ByteString.copyFromUtf8(prefix))
          .setRangeEnd(ByteString.copyFrom(prefixEnd(prefix).getBytes())).setStartRevision(fromRevision)
          .setProgressNotify(true).setPrevKv(false);
    }

    @Override
    public void cancel(long stream) {
      if (jetcdWatcher != null && watchFor == stream) {
        jetcdWatcher.close();
        jetcdWatcher = null;
      }
      if (watch != null && watchFor == stream) {
        watch.cancel();
        watch = null;
      }
    }

    @Override
    public void requestProgress(long stream) {
      if (jetcdWatcher != null && watchFor == stream) {
        attemptStartedNanos = System.nanoTime();
        jetcdWatcher.requestProgress();
        return;
      }
      if (watch == null || watchFor != stream) {
        return;
      }
      attemptStartedNanos = System.nanoTime(); // a stall is judged from here: did anyone succeed since?
      if (!watch.requestProgress()) {
        move();
      }
    }

    /**
     * The watch's stream retired: the watch moves to the open stream, from the checkpoint, under the same driver
     * stream number, and asks there. Responses of the old watch still queued on the loop are dropped (they are not
     * from {@link #watch}); those it delivered before are applied, and the applier ignores their revisions when
     * the new watch replays them.
     */
    private void move() {
      WatchStream.Watch from = watch;
      WatchStream watches;
      try {
        watches = connection.watchStream();
        used = watches.client();
      } catch (RuntimeException e) {
        from.cancel();
        watch = null;
        onLoop(() -> failed(watchFor, e));
        return;
      }
      open(watches, watchFor, applier.revision(), from);
      if (watch != null) {
        watch.requestProgress();
      }
    }

    @Override
    public void onResponse(WatchStream.Watch w, WatchResponse response) {
      onLoop(() -> {
        if (w == watch) {
          dispatch(watchFor, response);
        }
      });
    }

    @Override
    public void onFailed(WatchStream.Watch w, Throwable error) {
      onLoop(() -> {
        if (w == watch) {
          watch = null;
          failed(watchFor, error);
        }
      });
    }

    @Override
    public void onRetired(WatchStream.Watch w) {
      onLoop(() -> {
        if (w == watch) {
          move();
        }
      });
    }

    /** The connection decides (a success on {@code used} since this attempt began outvotes it); never a loop's. */
    @Override
    public void connectionFailed(String reason) {
      if (used != null) {
        Client client = used;
        long startedAt = attemptStartedNanos;
        DeliveryPool.blocking(() -> connection.failed(client, startedAt, config.service() + ": " + reason));
      }
    }

    @Override
    public boolean probe() {
      return DeliveryPool.blocking(connection::reachable); // one probe serves all the connection's caches
    }

    /**
     * The audit's read: a keys-only range pinned at {@code revision}, in pages of {@link CacheConfig#pageSize()}
     * keys, so etcd sends each key and its mod revision and no value. Empty when etcd says the revision was
     * compacted. Blocks the loop as a managed blocker, as {@link #range} does.
     */
    @Override
    public Optional<List<RevisionApplier.KeyRevision>> keys(long revision) {
      Client client = attempt();
      ByteSequence end = prefixEnd(prefix);
      List<RevisionApplier.KeyRevision> out = new ArrayList<>();
      ByteSequence from = bytes(prefix);
      while (true) {
        GetOption option = GetOption.builder().withRange(end).withKeysOnly(true).withLimit(config.pageSize())
            .withSortField(GetOption.SortTarget.KEY).withSortOrder(GetOption.SortOrder.ASCEND)
            .withRevision(revision).build();
        ByteSequence pageFrom = from;
        GetResponse page;
        try {
          page = DeliveryPool.blocking(() -> EtcdOps.await("audit " + prefix + " at revision " + revision,
              client.getKVClient().get(pageFrom, option), config.requestTimeout()));
        } catch (EtcdOps.EtcdCallException e) {
          if (e.kind() != EtcdErrors.Kind.UNAVAILABLE) {
            connection.succeeded(client);
          }
          if (EtcdErrors.isCompacted(e.getCause())) {
            return Optional.empty();
          }
          throw new CacheIoException(e.getMessage(), e, e.kind() == EtcdErrors.Kind.UNAVAILABLE);
        } catch (RuntimeException e) { // e.g. the client was closed meanwhile
          throw new CacheIoException("could not audit " + prefix + ": " + e, e, true);
        }
        connection.succeeded(client);
        List<KeyValue> kvs = page.getKvs();
        for (KeyValue kv : kvs) {
          out.add(new RevisionApplier.KeyRevision(kv.getKey().toString(StandardCharsets.UTF_8), kv.getModRevision()));
        }
        if (!page.isMore() || kvs.isEmpty()) {
          return Optional.of(out);
        }
        byte[] lastKey = kvs.get(kvs.size() - 1).getKey().getBytes();
        from = ByteSequence.from(Arrays.copyOf(lastKey, lastKey.length + 1)); // the smallest key after it
      }
    }
  }

  /** One response of this cache's watch, as jetcd's watcher handed it to its listener. Runs on the loop. */
  private void dispatch(long stream, WatchResponse response) {
    Header header = new Header(response.getHeader().getClusterId(), response.getHeader().getRevision());
    if (response.getCreated()) {
      driver.onCreated(stream, header);
    } else if (io.etcd.jetcd.watch.WatchResponse.isProgressNotify(response)) {
      driver.onProgress(stream, header);
    } else {
      List<CacheRecord> records = new ArrayList<>(response.getEventsCount());
      for (Event e : response.getEventsList()) {
        io.etcd.jetcd.api.KeyValue kv = e.getKv();
        String key = kv.getKey().toStringUtf8();
        records.add(e.getType() == Event.EventType.DELETE
            ? CacheRecord.delete(key, kv.getModRevision())
            : CacheRecord.put(key, kv.getValue().toByteArray(), kv.getModRevision(), kv.getLease()));
      }
      driver.onEvents(stream, header, records);
    }
  }

  /** One response of this cache's jetcd watcher (see {@code watchThroughJetcd}). Runs on the loop. */
  private void dispatchJetcd(long stream, io.etcd.jetcd.watch.WatchResponse response) {
    Header header = new Header(response.getHeader().getClusterId(), response.getHeader().getRevision());
    if (response.isCreatedNotify()) {
      driver.onCreated(stream, header);
    } else if (response.isProgressNotify()) {
      driver.onProgress(stream, header);
    } else {
      List<CacheRecord> records = new ArrayList<>(response.getEvents().size());
      for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
        KeyValue kv = e.getKeyValue();
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        records.add(e.getEventType() == io.etcd.jetcd.watch.WatchEvent.EventType.DELETE
            ? CacheRecord.delete(key, kv.getModRevision())
            : CacheRecord.put(key, kv.getValue().getBytes(), kv.getModRevision(), kv.getLease()));
      }
      driver.onEvents(stream, header, records);
    }
  }

  private void failed(long stream, Throwable error) {
    Throwable cause = EtcdErrors.unwrap(error);
    if (cause instanceof CompactedException ce) {
      driver.onError(stream, StreamError.COMPACTED, ce.getCompactedRevision(), EtcdErrors.describe(cause));
      return;
    }
    StreamError kind = EtcdErrors.classifyWatch(cause) != EtcdErrors.Kind.UNAVAILABLE ? StreamError.OTHER
        : EtcdErrors.isNoLeader(cause) ? StreamError.NO_LEADER : StreamError.UNAVAILABLE;
    driver.onError(stream, kind, 0, EtcdErrors.describe(cause));
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The end of the range holding every key that starts with {@code prefix} (prefix with its last byte + 1). */
  static ByteSequence prefixEnd(String prefix) {
    byte[] b = prefix.getBytes(StandardCharsets.UTF_8);
    for (int i = b.length - 1; i >= 0; i--) {
      if (b[i] != (byte) 0xff) {
        b[i]++;
        return ByteSequence.from(java.util.Arrays.copyOf(b, i + 1));
      }
    }
    return ByteSequence.from(new byte[] {0}); // every key (not reachable: our prefixes end with '/')
  }
}
