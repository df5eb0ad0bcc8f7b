package dev.muster.etcd.internal;

import dev.muster.etcd.EtcdConfig;
import dev.muster.internal.DeliveryPool;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.WatchCancelRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchGrpc;
import io.etcd.jetcd.api.WatchProgressRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Longer than our 500-line guide: the stream's states, the routing of every kind of response and the progress
 * bookkeeping are one state machine, read together; what etcd's messages mean is in WatchMessages.
 */
/**
 * Every endpoint cache's watch on one client generation, spread round-robin over a fixed number of bidirectional
 * {@code Watch/Watch} streams that Muster writes itself ({@link EtcdConfig#watchStreams()}, 8 by default), where
 * jetcd opens a stream per watcher (docs/design-memory.md, section 1 and its "As built").
 *
 * <p>Thread-safe. {@link #watch} is called on a cache's loop and returns at once when the stream of its slot is open;
 * opening one (capturing jetcd's channel, choosing a token) is done by one caller per slot at a time, with no lock
 * held, as a managed blocker of the delivery pool, within the caller's timeout, while other callers of that slot wait
 * for it. One lock, this object's monitor, guards the slots, the streams, their id → watch maps, their writes and
 * cancels (grpc-java buffers a write without blocking and delivers a cancel's outcome on its own executor; a
 * {@code StreamObserver} must not be written from two threads at once). It is held for no I/O and no callback.
 * Responses arrive on gRPC's thread, one at a time per stream; each is routed under the lock and handed to its
 * {@link Target}s after the lock is released. A target only hands the response to its cache's loop, so one slow
 * cache never holds the stream. {@link #close()} may be called from any thread.
 *
 * <p>Why several streams: etcd sends the responses of one event to the watches of one stream one after another, so
 * an event that N caches of a JVM watch (many caches of one service) reached the last of them N times later on one
 * stream than on N; spread over K streams, each carries N/K of them (docs/memory-watch-fanout-k.txt). Round-robin,
 * not by prefix: the slow case is many watches of the same prefix. Every rule below is per stream: its progress
 * requests and answers, its retirement (which frees its slot alone; the next watch assigned to that slot opens a new
 * stream), its end (which fails only its watches). Streams open lazily, so a client with fewer watches than slots
 * opens as many streams as it has watches.
 *
 * <p>The channel is jetcd's ({@link ChannelCapture}), so the streams share the client's connection and TLS; each call
 * carries {@code hasleader: true} (every cache watches with {@code requireLeader}: a member without a leader ends
 * the stream rather than going silent) and, with credentials, a {@code token} header chosen by {@link StreamTokens}.
 *
 * <p>Watches. Each create carries a {@code watch_id} of the connection's counter, as etcd's field 7, which jetcd
 * 0.8.6's generated class lacks (set as an unknown field; muster-bench/probe/WatchMuxProbe.java showed both lines
 * honour it), and every response names the id it is for. A create etcd refuses ({@code created} and
 * {@code canceled}, or the id −1) and a watch etcd cancels later fail that watch alone, with the errors jetcd's
 * watcher gave for them, so the caches classify them as before. A cancel is written once; the watch's entry goes on
 * etcd's confirmation or with the stream. A stream writes its first create alone: its answer shows whether the
 * server answers with our ids. etcd's grpc-proxy does not (ids of its own, from 0, and answers out of order across
 * ranges): then each stream keeps one create in flight and routes by the server's ids, and the caches' later watches
 * go through jetcd instead ({@link #givesOwnIds()}). Which the server does is learnt once per client, from the first
 * stream answered: every stream of a client goes to the same server.
 *
 * <p>A stream's states: OPEN (takes creates) → RETIRED (takes none; its watches keep receiving) → ENDED.
 * <ul>
 *   <li>RETIRED: etcd cancelled one of its watches as compacted (3.5.30 then answers no progress request on that
 *       stream, docs/memory-watch-mux.txt), or refused a create on it while it carries a token (3.4 answers an
 *       expired token with "permission denied"; the token is not used again). The next create assigned to its slot
 *       opens a new stream; the other streams stay open.
 *       A watch on a retired stream moves when its cache next asks for progress ({@link Watch#requestProgress}
 *       returns false; the cache calls {@link #move}); a cache whose progress request was outstanding at retirement
 *       is told at once ({@link Target#onRetired}), since that answer may never come. Moving every watch at once
 *       instead would cost K × N creates when K caches resume below a compaction.
 *   <li>ENDED: gRPC ended it ({@code onError}, {@code onCompleted}): every watch on it fails, as unavailable unless
 *       etcd said it has no leader or refused the stream; or this object was closed with its client; or it was
 *       retired and its last watch left (then nobody is told).
 * </ul>
 *
 * <p>Progress is per stream: a request is answered once, with the id −1, covering the watches whose creates were
 * written before it. One request is outstanding at a time; its answer goes to every watch with an id up to the
 * highest one written when it was sent, and a later watch that asked meanwhile gets a second request when the first
 * is answered. A request unanswered after {@link #PROGRESS_RESEND} is written again, every as long: 3.5 never answers
 * one that comes while a watch of the stream is unsynced, where 3.4 answers at once.
 */
final class WatchStream implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WatchStream.class);
  private static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> HAS_LEADER = Metadata.Key.of("hasleader",
      Metadata.ASCII_STRING_MARSHALLER);
  /** A progress request unanswered this long is written again (see {@link Stream#resendProgress}). */
  private static final Duration PROGRESS_RESEND = Duration.ofMillis(250);
  /** A create that finds its stream retired or ended just now tries the next one, this many times in all. */
  private static final int CREATE_TRIES = 3;

  /**
   * A cache's side of its watch. Called on gRPC's thread (or on the thread that closes the stream), never under the
   * stream's lock; each method must only hand over and return.
   */
  interface Target {
    /** A response for {@code watch}: created, events, its own progress notification, or the stream's progress. */
    void onResponse(Watch watch, WatchResponse response);

    /** {@code watch} is over without the cache cancelling it: etcd refused or cancelled it, or its stream ended. */
    void onFailed(Watch watch, Throwable error);

    /** {@code watch}'s stream retired while the cache waited for its progress answer: ask again, which moves it. */
    void onRetired(Watch watch);
  }

  /** One cache's watch on one stream. The cache calls it on its loop. */
  static final class Watch {
    final long id;
    private final Target target;
    private final Stream stream;
    // guarded by the stream's WatchStream:
    private boolean cancelling;
    private boolean written; // its create is on the wire (else queued behind another, see Stream)
    private long serverId = -1; // the id the server's answer gave it, once answered
    private WatchRequest request; // its create, while queued

    private Watch(long id, Target target, Stream stream) {
      this.id = id;
      this.target = target;
      this.stream = stream;
    }

    /** Writes the cancel, once; nothing more reaches the target, unless already handed over. */
    void cancel() {
      stream.cancel(this);
    }

    /**
     * Asks the stream for progress (one request for every watch on it). False when the stream is retired: the cache
     * moves the watch ({@link WatchStream#move}), whose new stream answers.
     */
    boolean requestProgress() {
      return stream.requestProgress(this);
    }
  }

  private final Client client;
  private final ChannelCapture capture;
  private final StreamTokens tokens; // null without credentials
  private final WatchCounters counters;
  private final AtomicLong ids;
  private final Runnable answered;
  // guarded by this:
  private final Stream[] slots; // each slot's OPEN stream, or null
  private final List<CompletableFuture<Stream>> opening; // per slot: the open under way, or null
  private int next; // the slot of the next create (round-robin)
  private final Set<Stream> live = new HashSet<>(); // OPEN and RETIRED streams
  private boolean closed;
  /**
   * Whether the server answers a create with the {@code watch_id} it asked for: etcd 3.4 and later do; etcd's
   * grpc-proxy gives ids of its own, and answers creates for different ranges out of order. Null until a stream's
   * first create is answered; until then, and for good when not, a stream has one create in flight at a time (as
   * etcd's Go client does), so each answer names the create it is for.
   */
  private Boolean idsHonoured;

  /**
   * {@code streams} is how many streams the watches are spread over (at least 1); {@code ids} is the connection's
   * watch id counter (shared by its generations); {@code answered} runs on every response (a success reported to the
   * connection).
   */
  WatchStream(Client client, ChannelCapture capture, EtcdConfig.Credentials credentials, int streams,
      WatchCounters counters, AtomicLong ids, Runnable answered) {
    if (streams < 1) {
      throw new IllegalArgumentException("streams must be at least 1, not " + streams);
    }
    this.slots = new Stream[streams];
    this.opening = new ArrayList<>(Collections.nCopies(streams, null));
    this.client = client;
    this.capture = capture;
    this.tokens = credentials == null ? null : new StreamTokens(capture, credentials, counters.tokens, "watch");
    this.counters = counters;
    this.ids = ids;
    this.answered = answered;
  }

  /** The client whose channel this stream uses: the one a failure report is about. */
  Client client() {
    return client;
  }

  /**
   * Whether the server was found to answer creates with ids of its own (etcd's grpc-proxy): then a cache watches
   * through jetcd instead, one stream per watch, since this stream could only take one create at a time.
   */
  synchronized boolean givesOwnIds() {
    return idsHonoured == Boolean.FALSE;
  }

  /**
   * Writes {@code create} (its {@code watch_id} set here) on the open stream of the next slot, round-robin, opening
   * one if that slot has none, and returns the watch; responses go to {@code target}. Blocks only to open a stream,
   * for at most {@code timeout}.
   *
   * @throws RuntimeException a gRPC status (unavailable when closed, or no stream could be opened in time) or what
   *     opening the stream failed with (a refused token request), for the caller to classify as a watch error
   */
  Watch watch(WatchCreateRequest.Builder create, Target target, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (int tries = 0; ; tries++) {
      Stream s;
      int slot;
      synchronized (this) {
        if (closed) {
          throw replaced();
        }
        slot = next;
        next = (next + 1) % slots.length;
        s = slots[slot];
      }
      if (s == null) {
        s = DeliveryPool.blocking(() -> stream(slot, deadline));
      }
      Watch w = s.create(create, target);
      if (w != null) {
        return w;
      }
      if (tries + 1 >= CREATE_TRIES) {
        throw Status.UNAVAILABLE.withDescription("the watch stream ended as the watch was created")
            .asRuntimeException();
      }
    }
  }

  /**
   * Moves {@code old} (on a retired stream, of this client or a replaced one) to this client's streams: cancels it
   * there and writes {@code create}, with the same target, on the next slot. As {@link #watch}.
   */
  Watch move(Watch old, WatchCreateRequest.Builder create, Duration timeout) {
    old.cancel();
    counters.moved.increment();
    return watch(create, old.target, timeout);
  }

  /** Ends every stream; their watches fail as unavailable, and later creates fail at once. Idempotent. */
  @Override
  public void close() {
    List<Stream> all;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      Arrays.fill(slots, null);
      all = new ArrayList<>(live);
    }
    for (Stream s : all) {
      s.end(replaced(), true);
    }
  }

  private static RuntimeException replaced() {
    return Status.UNAVAILABLE.withDescription("the etcd client was replaced or closed").asRuntimeException();
  }

  /** {@code slot}'s open stream, or one opened now: by this caller, or by another one it waits for. */
  private Stream stream(int slot, long deadline) {
    CompletableFuture<Stream> pending;
    boolean mine = false;
    synchronized (this) {
      if (closed) {
        throw replaced();
      }
      if (slots[slot] != null) {
        return slots[slot];
      }
      if (opening.get(slot) == null) {
        opening.set(slot, new CompletableFuture<>());
        mine = true;
      }
      pending = opening.get(slot);
    }
    if (mine) {
      Stream opened = null;
      Throwable failure = null;
      try {
        opened = open(slot, deadline);
      } catch (ExecutionException e) {
        failure = e.getCause();
      } catch (TimeoutException e) {
        failure = Status.DEADLINE_EXCEEDED.withDescription("no watch stream opened within the request timeout")
            .asRuntimeException();
      } catch (RuntimeException e) {
        failure = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failure = Status.UNAVAILABLE.withDescription("opening the watch stream was interrupted").asRuntimeException();
      }
      boolean closedMeanwhile;
      synchronized (this) {
        opening.set(slot, null);
        closedMeanwhile = closed;
        if (opened != null && !closedMeanwhile && !opened.ended) {
          slots[slot] = opened; // if it has ended or retired already, the slot's next caller opens another
          live.add(opened);
        }
      }
      if (opened != null && closedMeanwhile) {
        opened.end(replaced(), true);
      }
      if (failure != null) {
        pending.completeExceptionally(failure);
      } else {
        pending.complete(opened);
      }
    }
    try {
      return pending.get(remaining(deadline), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw Status.DEADLINE_EXCEEDED.withDescription("no watch stream opened within the request timeout")
          .asRuntimeException();
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r
          : Status.UNAVAILABLE.withDescription("opening the watch stream failed").withCause(e.getCause())
              .asRuntimeException();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.UNAVAILABLE.withDescription("waiting for the watch stream was interrupted").asRuntimeException();
    }
  }

  /** Captures the channel, finds a token when there are credentials, and starts a call. No lock held. */
  private Stream open(int slot, long deadline) throws ExecutionException, TimeoutException, InterruptedException {
    // Nothing has called through the client yet (one built to replace another): a lease read makes jetcd call,
    // authenticating first with credentials, and the interceptor sees the channel and jetcd's token. Its answer
    // does not matter.
    CompletableFuture<?> read = capture.channel().isDone() ? null
        : client.getLeaseClient().timeToLive(0, LeaseOption.DEFAULT);
    Channel channel = capture.channel(read, deadline);
    String t = tokens == null ? null : tokens.forNewStream(channel, read, deadline);
    Metadata headers = new Metadata();
    headers.put(HAS_LEADER, "true");
    if (t != null) {
      headers.put(TOKEN, t);
    }
    Stream s = new Stream(slot, t);
    WatchGrpc.newStub(channel).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers)).watch(s);
    counters.streams.increment();
    return s;
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  /** One Watch call: its request side and its watches. Every field is guarded by WatchStream.this. */
  private final class Stream implements ClientResponseObserver<WatchRequest, WatchResponse> {
    private final int slot; // its place in slots while OPEN
    private final String token; // the token it was opened with, or null
    private ClientCallStreamObserver<WatchRequest> requests;
    private final Map<Long, Watch> watches = new HashMap<>(); // by our id: every watch on it, written or queued
    private final Map<Long, Watch> routes = new HashMap<>(); // by the server's id: the answered ones
    /** Written, not yet answered, in the order written: etcd answers creates in that order. */
    private final ArrayDeque<Watch> unacknowledged = new ArrayDeque<>();
    /** Not yet written: behind the one create in flight while the server's ids are unknown or not ours. */
    private final ArrayDeque<Watch> queued = new ArrayDeque<>();
    private int active; // watches in the map not cancelling
    private long lastId; // the highest id written on it
    private boolean retired;
    private boolean ended;
    private boolean progressOutstanding;
    private long progressCovers; // the highest id written when the outstanding progress request was
    private boolean progressAgain; // a later watch asked meanwhile: one more request when it is answered
    private long progressRequests; // requests sent (not counting resends): which one is outstanding
    private final List<Watch> askers = new ArrayList<>(); // who asked since the last answer

    Stream(int slot, String token) {
      this.slot = slot;
      this.token = token;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
      synchronized (WatchStream.this) {
        requests = requestStream;
      }
    }

    /**
     * Writes a create, or queues it behind the one in flight (see {@link WatchStream#idsHonoured}); null when this
     * stream is retired or ended (the caller tries the next one).
     */
    Watch create(WatchCreateRequest.Builder create, Target target) {
      RuntimeException writeFailed;
      synchronized (WatchStream.this) {
        if (ended || retired) {
          return null;
        }
        long id = ids.incrementAndGet();
        Watch w = new Watch(id, target, this);
        w.request = WatchMessages.create(create, id);
        watches.put(id, w);
        active++;
        if (idsHonoured != Boolean.TRUE && (!unacknowledged.isEmpty() || !queued.isEmpty())) {
          queued.add(w); // one create at a time until the server is known to answer with our ids
          return w;
        }
        writeFailed = writeLocked(w);
        if (writeFailed == null) {
          return w;
        }
      }
      end(Status.UNAVAILABLE.withDescription("the watch stream refused a write").withCause(writeFailed)
          .asRuntimeException(), true);
      return null;
    }

    /** Writes {@code w}'s create; what gRPC threw when it refused the write (a call it has closed), else null. */
    private RuntimeException writeLocked(Watch w) {
      try {
        requests.onNext(w.request);
      } catch (RuntimeException e) {
        return e;
      }
      w.request = null;
      w.written = true;
      unacknowledged.add(w);
      lastId = w.id;
      counters.creates.increment();
      return null;
    }

    /** Writes the queued creates the server's answers allow: all once it answers with our ids, else the next. */
    private void drainLocked() {
      while (!queued.isEmpty() && (idsHonoured == Boolean.TRUE || unacknowledged.isEmpty())) {
        if (writeLocked(queued.poll()) != null) {
          return; // the call is closed: its end follows and fails every watch
        }
      }
    }

    private void writeCancelLocked(long serverId) {
      try {
        requests.onNext(WatchRequest.newBuilder().setCancelRequest(WatchCancelRequest.newBuilder()
            .setWatchId(serverId)).build());
        counters.cancels.increment();
      } catch (RuntimeException e) {
        // the call is closed: its end follows, and takes the entry with it
      }
    }

    void cancel(Watch w) {
      boolean finish;
      synchronized (WatchStream.this) {
        if (ended || w.cancelling || watches.get(w.id) != w) {
          return;
        }
        w.cancelling = true;
        active--;
        if (!w.written) { // never reached the server
          queued.remove(w);
          watches.remove(w.id);
        } else if (w.serverId != -1) {
          writeCancelLocked(w.serverId);
        } // else: written, not answered yet; the cancel goes with the answer, under the server's id
        finish = retired && active == 0;
      }
      if (finish) {
        finish();
      }
    }

    boolean requestProgress(Watch w) {
      synchronized (WatchStream.this) {
        if (ended || w.cancelling) {
          return true; // the watch's failure is on its way, or it is gone
        }
        if (retired) {
          return false;
        }
        if (askers.size() > watches.size()) {
          askers.removeIf(a -> a.cancelling || watches.get(a.id) != a);
        }
        askers.add(w);
        if (progressOutstanding) {
          if (w.id > progressCovers) {
            progressAgain = true;
          }
        } else {
          sendProgressLocked();
        }
        return true;
      }
    }

    private void sendProgressLocked() {
      if (writeProgressLocked()) {
        progressOutstanding = true;
        progressCovers = lastId;
        long request = ++progressRequests;
        DeliveryPool.schedule(() -> resendProgress(request), PROGRESS_RESEND.toNanos());
      }
    }

    private boolean writeProgressLocked() {
      try {
        requests.onNext(WatchRequest.newBuilder().setProgressRequest(WatchProgressRequest.newBuilder()).build());
        counters.progress.increment();
        return true;
      } catch (RuntimeException e) {
        return false; // the call is closed: its end follows and fails every watch
      }
    }

    /**
     * On the pool's timer thread: request {@code request} is still unanswered, so it is written again (one write
     * under the lock, nothing else). 3.5 answers a progress request only if every watch of the stream is synced at
     * that moment, and else never (etcd's {@code progressIfSync}, since etcd 15237): a create still catching up,
     * for a few hundred ms after a storm, or one from a future revision. Without this, every cache that asked would
     * wait for the lost answer until its stall check broke it. The answer covers the watches the first request
     * covered.
     */
    private void resendProgress(long request) {
      synchronized (WatchStream.this) {
        if (ended || retired || !progressOutstanding || progressRequests != request || idsHonoured != Boolean.TRUE) {
          return; // a server with ids of its own is no etcd member (grpc-proxy answers no progress request)
        }
        if (writeProgressLocked()) {
          counters.progressResent.increment();
          DeliveryPool.schedule(() -> resendProgress(request), PROGRESS_RESEND.toNanos());
        }
      }
    }

    @Override
    public void onNext(WatchResponse r) {
      answered.run();
      Watch one = null; // the watch this response is for
      Throwable failure = null; // ... when it ends that watch
      List<Watch> progress = null; // the watches a progress answer is for
      List<Watch> moving = null; // askers of a progress request outstanding when this stream retired
      boolean finish;
      synchronized (WatchStream.this) {
        if (ended) {
          return;
        }
        long id = r.getWatchId();
        if (r.getCreated()) {
          Watch w = acknowledgedLocked(id);
          if (w == null) {
            return;
          }
          if (r.getCanceled() || id == -1) {
            counters.refused.increment();
            watches.remove(w.id);
            drainLocked();
            if (!w.cancelling) {
              active--;
              one = w;
              failure = WatchMessages.refusal(r);
            }
            if (token != null) { // the token may be why (3.4 says "permission denied" for an expired one)
              tokens.refused(token);
              moving = retireLocked("etcd refused a create on it (" + r.getCancelReason() + ")");
            }
          } else {
            w.serverId = id;
            routes.put(id, w);
            if (w.cancelling) {
              writeCancelLocked(id);
            } else {
              one = w;
            }
            drainLocked();
          }
        } else if (r.getCanceled()) {
          Watch w = routes.remove(id);
          if (w == null) {
            return;
          }
          watches.remove(w.id);
          if (!w.cancelling) {
            active--;
            one = w;
            failure = WatchMessages.cancellation(r);
            if (r.getCompactRevision() != 0) {
              moving = retireLocked("etcd cancelled watch " + id + " on it as compacted");
            }
          }
        } else if (id == -1) { // the stream's answer to a progress request
          progress = new ArrayList<>(watches.size());
          for (Watch w : watches.values()) {
            if (!w.cancelling && w.id <= progressCovers) {
              progress.add(w);
            }
          }
          progressOutstanding = false;
          askers.clear();
          if (progressAgain) {
            progressAgain = false;
            sendProgressLocked();
          }
        } else {
          Watch w = routes.get(id);
          if (w == null || w.cancelling) {
            return;
          }
          one = w;
        }
        finish = retired && active == 0;
      }
      if (one != null) {
        if (failure == null) {
          one.target.onResponse(one, r);
        } else {
          counters.failed.increment();
          one.target.onFailed(one, failure);
        }
      }
      if (progress != null) {
        for (Watch w : progress) {
          w.target.onResponse(w, r);
        }
      }
      if (moving != null) {
        for (Watch w : moving) {
          w.target.onRetired(w);
        }
      }
      if (finish) {
        finish();
      }
    }

    /**
     * The watch a {@code created} answer is for. While the server's ids are unknown or not ours, one create is in
     * flight: that one; the first answer with an id other than −1 tells which (ours, or the server's own, as etcd's
     * grpc-proxy gives). Once they are ours: the watch of that id, or the oldest unanswered one for the id −1
     * (etcd answers creates in the order written).
     */
    private Watch acknowledgedLocked(long id) {
      if (idsHonoured != Boolean.TRUE || id == -1) {
        Watch w = unacknowledged.poll();
        if (w != null && id != -1 && idsHonoured == null) {
          idsHonoured = id == w.id;
          if (!idsHonoured) {
            log.info("the watch server on {} answers creates with its own ids (etcd's grpc-proxy does): one create"
                + " at a time on its stream, and the caches' next watches go through jetcd", client);
          }
        }
        return w;
      }
      for (Iterator<Watch> it = unacknowledged.iterator(); it.hasNext(); ) {
        Watch w = it.next();
        if (w.id == id) {
          it.remove();
          return w;
        }
      }
      return null;
    }

    /** OPEN → RETIRED; returns the askers of a progress request still outstanding (moved by their caches). */
    private List<Watch> retireLocked(String why) {
      if (retired) {
        return null;
      }
      retired = true;
      if (slots[slot] == this) {
        slots[slot] = null; // the slot's next create opens a new stream; the other slots keep theirs
      }
      counters.retired.increment();
      log.info("a watch stream on {} retired with {} watch(es) on it, which move on their next progress request: {}",
          client, active, why);
      if (!progressOutstanding) {
        return null;
      }
      List<Watch> moving = new ArrayList<>(askers.size());
      for (Watch w : askers) {
        if (!w.cancelling && watches.get(w.id) == w) {
          moving.add(w);
        }
      }
      askers.clear();
      return moving;
    }

    @Override
    public void onError(Throwable t) {
      end(t, false);
    }

    @Override
    public void onCompleted() {
      end(Status.UNAVAILABLE.withDescription("etcd ended the watch stream").asRuntimeException(), false);
    }

    /** A retired stream without watches: ends quietly. */
    private void finish() {
      synchronized (WatchStream.this) {
        if (ended) {
          return;
        }
        ended = true;
        live.remove(this);
        watches.clear();
        routes.clear();
        unacknowledged.clear();
        queued.clear();
        askers.clear();
        requests.cancel("the retired watch stream has no watch left", null); // its onError finds it ended
      }
      counters.ended.increment();
    }

    /** Ends the stream with {@code t}, once: every watch on it fails (see {@link WatchMessages#streamFailure}). */
    void end(Throwable t, boolean cancel) {
      List<Watch> failing;
      synchronized (WatchStream.this) {
        if (ended) {
          return;
        }
        ended = true;
        if (slots[slot] == this) {
          slots[slot] = null;
        }
        live.remove(this);
        if (token != null && EtcdErrors.tokenRefused(t)) {
          tokens.refused(token); // the next stream is opened with a new one
        }
        failing = new ArrayList<>(active);
        for (Watch w : watches.values()) {
          if (!w.cancelling) {
            failing.add(w);
          }
        }
        watches.clear();
        routes.clear();
        unacknowledged.clear();
        queued.clear();
        askers.clear();
        if (cancel) {
          requests.cancel("Muster ended the watch stream", t); // as every write, under the lock
        }
      }
      counters.ended.increment();
      log.debug("the watch stream on {} ended ({} watch(es) on it): {}", client, failing.size(),
          EtcdErrors.describe(t));
      Throwable why = WatchMessages.streamFailure(t);
      for (Watch w : failing) {
        counters.failed.increment();
        w.target.onFailed(w, why);
      }
    }
  }
}
