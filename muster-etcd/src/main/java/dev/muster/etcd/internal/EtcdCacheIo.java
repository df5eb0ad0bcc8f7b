package dev.muster.etcd.internal;

import com.google.protobuf.ByteString;
import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.internal.CacheDriver;
import dev.muster.cache.internal.CacheDriver.CacheIoException;
import dev.muster.cache.internal.CacheDriver.Header;
import dev.muster.cache.internal.CacheDriver.StreamError;
import dev.muster.cache.internal.CacheRecord;
import dev.muster.cache.internal.LiveCache;
import dev.muster.cache.internal.RevisionApplier;
import dev.muster.internal.DeliveryPool;
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
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * One endpoint cache's I/O on etcd: {@link CacheDriver.Io} done with jetcd (ranges, the audit's reads) and {@link
 * WatchStream} (the watch). The cache itself, its loop, timers and listeners, is muster-core's {@link LiveCache};
 * {@link #startCache} puts the two together.
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
 * Every {@link CacheDriver.Io} method runs on the cache's loop (the driver calls it there). A range's waits for its
 * pages, a watch that has to open its client's stream first, the audit's pages, the reachability probe and a
 * failure report are its only blocking calls (at most the request timeout each); each runs as a managed blocker
 * ({@link DeliveryPool#blocking}), so it never holds up another cache. The {@link WatchStream.Target} methods and a
 * jetcd watcher's callbacks run on gRPC's thread and only hand the response to the loop ({@link
 * LiveCache.Loop#execute}); the fields below are the loop's.
 */
public final class EtcdCacheIo implements CacheDriver.Io, WatchStream.Target {
  private final EtcdConnection connection;
  private final CacheConfig config;
  private final String prefix;
  private final LiveCache.Loop loop;
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

  private EtcdCacheIo(EtcdConnection connection, CacheConfig config, String prefix, LiveCache.Loop loop) {
    this.connection = connection;
    this.config = config;
    this.prefix = prefix;
    this.loop = loop;
  }

  /**
   * Starts a cache of {@code config} on {@code connection}: a {@link LiveCache} whose I/O is an {@code EtcdCacheIo},
   * its prefix laid out by the connection's layout. See {@link LiveCache#start} for the other arguments; {@code
   * dropRevision} is 0 but in the audit's negative control.
   */
  public static LiveCache startCache(EtcdConnection connection, CacheConfig config, CacheDriver.ResumeRule rule,
      Clock clock, RandomGenerator backoffRandom, long dropRevision, List<EndpointListener> listeners,
      Consumer<EndpointCache> onClosed) {
    return LiveCache.start(connection.config().layout(), config,
        (prefix, loop) -> new EtcdCacheIo(connection, config, prefix, loop), rule, clock, backoffRandom, dropRevision,
        listeners, onClosed);
  }

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
      loop.execute(() -> failed(stream, e));
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
        loop.execute(() -> dispatchJetcd(stream, response));
      }

      @Override
      public void onError(Throwable error) {
        loop.execute(() -> failed(stream, error));
      }

      @Override
      public void onCompleted() {
        loop.execute(() -> loop.driver().onClosed(stream));
      }
    };
    try {
      jetcdWatcher = client.getWatchClient().watch(bytes(prefix), option.build(), listener);
      watchFor = stream;
      if (!connection.isCurrent(client)) {
        // replaced meanwhile: jetcd 0.8.6 may hand back a watcher it never starts (docs/etcd-watch-bugs.md)
        loop.execute(() -> loop.driver().onError(stream, StreamError.UNAVAILABLE, 0,
            "the shared etcd client was replaced while this watch was opened"));
      }
    } catch (RuntimeException e) {
      loop.execute(() -> failed(stream, e));
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
      loop.execute(() -> failed(stream, e));
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
      loop.execute(() -> failed(watchFor, e));
      return;
    }
    open(watches, watchFor, loop.checkpoint(), from);
    if (watch != null) {
      watch.requestProgress();
    }
  }

  @Override
  public void onResponse(WatchStream.Watch w, WatchResponse response) {
    loop.execute(() -> {
      if (w == watch) {
        dispatch(watchFor, response);
      }
    });
  }

  @Override
  public void onFailed(WatchStream.Watch w, Throwable error) {
    loop.execute(() -> {
      if (w == watch) {
        watch = null;
        failed(watchFor, error);
      }
    });
  }

  @Override
  public void onRetired(WatchStream.Watch w) {
    loop.execute(() -> {
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

  /** One response of this cache's watch, as jetcd's watcher handed it to its listener. Runs on the loop. */
  private void dispatch(long stream, WatchResponse response) {
    Header header = new Header(response.getHeader().getClusterId(), response.getHeader().getRevision());
    if (response.getCreated()) {
      loop.driver().onCreated(stream, header);
    } else if (io.etcd.jetcd.watch.WatchResponse.isProgressNotify(response)) {
      loop.driver().onProgress(stream, header);
    } else {
      List<CacheRecord> records = new ArrayList<>(response.getEventsCount());
      for (Event e : response.getEventsList()) {
        io.etcd.jetcd.api.KeyValue kv = e.getKv();
        String key = kv.getKey().toStringUtf8();
        records.add(e.getType() == Event.EventType.DELETE
            ? CacheRecord.delete(key, kv.getModRevision())
            : CacheRecord.put(key, kv.getValue().toByteArray(), kv.getModRevision(), kv.getLease()));
      }
      loop.driver().onEvents(stream, header, records);
    }
  }

  /** One response of this cache's jetcd watcher (see {@code watchThroughJetcd}). Runs on the loop. */
  private void dispatchJetcd(long stream, io.etcd.jetcd.watch.WatchResponse response) {
    Header header = new Header(response.getHeader().getClusterId(), response.getHeader().getRevision());
    if (response.isCreatedNotify()) {
      loop.driver().onCreated(stream, header);
    } else if (response.isProgressNotify()) {
      loop.driver().onProgress(stream, header);
    } else {
      List<CacheRecord> records = new ArrayList<>(response.getEvents().size());
      for (io.etcd.jetcd.watch.WatchEvent e : response.getEvents()) {
        KeyValue kv = e.getKeyValue();
        String key = kv.getKey().toString(StandardCharsets.UTF_8);
        records.add(e.getEventType() == io.etcd.jetcd.watch.WatchEvent.EventType.DELETE
            ? CacheRecord.delete(key, kv.getModRevision())
            : CacheRecord.put(key, kv.getValue().getBytes(), kv.getModRevision(), kv.getLease()));
      }
      loop.driver().onEvents(stream, header, records);
    }
  }

  private void failed(long stream, Throwable error) {
    Throwable cause = EtcdErrors.unwrap(error);
    if (cause instanceof CompactedException ce) {
      loop.driver().onError(stream, StreamError.COMPACTED, ce.getCompactedRevision(), EtcdErrors.describe(cause));
      return;
    }
    StreamError kind = EtcdErrors.classifyWatch(cause) != EtcdErrors.Kind.UNAVAILABLE ? StreamError.OTHER
        : EtcdErrors.isNoLeader(cause) ? StreamError.NO_LEADER : StreamError.UNAVAILABLE;
    loop.driver().onError(stream, kind, 0, EtcdErrors.describe(cause));
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
