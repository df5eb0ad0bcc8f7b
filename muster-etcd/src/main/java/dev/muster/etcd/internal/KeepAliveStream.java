package dev.muster.etcd.internal;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.internal.EtcdOps.EtcdCallException;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.api.LeaseGrpc;
import io.etcd.jetcd.api.LeaseKeepAliveRequest;
import io.etcd.jetcd.api.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keepalives of every registration on one client generation, on one bidirectional {@code Lease/LeaseKeepAlive}
 * stream that Muster writes itself, so each keepalive reaches etcd once (jetcd 0.8.6's {@code keepAliveOnce} opens a
 * stream per keepalive and writes its request twice: docs/etcd-watch-bugs.md). The design and the probe that
 * checked its premises: docs/design-registrations.md, section 3.
 *
 * <p>The stream runs on jetcd's own channel, so on its connection and with its TLS: {@link ChannelCapture}, given to
 * the client's builder, keeps the channel of the first call jetcd makes through it, and grpc-java's generated
 * {@link LeaseGrpc} stub calls on that channel. When nothing has called through the client yet (a client just
 * built to replace another), the first keepalive starts a lease read through jetcd to make it. The stream belongs to
 * its client: {@link EtcdConnection} closes it with the client, and the next keepalive opens one on the new client.
 *
 * <p>Matching: each request is a lease id and each answer carries one. etcd answers a stream's requests one at a
 * time, in order, and a registration has at most one keepalive outstanding, so the waiters, kept in the order they
 * were written, are matched to answers by lease id (the first waiter for that lease: two registrations sharing a
 * lease would be answered in turn). A TTL of 0 or less is etcd saying the lease is gone.
 *
 * <p>Failures:
 * <ul>
 *   <li>A keepalive that times out stays in the queue, abandoned, so that a late answer is taken by it rather than
 *       by the next keepalive for the same lease. A timeout does not end the stream: after a client replacement the
 *       stream's requests wait, buffered, while etcd accepts TCP but does not serve yet (1 to 2 s after a restart,
 *       docs/storms-accept-vs-serve.txt), and each may still be answered within its own deadline. A stream that never answers
 *       is ended by gRPC's keepalive (a dead peer) or by etcd's own error, or goes with its client when the
 *       registrations' failure reports make the connection replace it; abandoned waiters go with it.
 *   <li>A stream that breaks for the connection's sake (unavailable, cancelled, no answer, ended by etcd) fails
 *       every waiter as unavailable, and the next keepalive opens a new stream. The registrar reports those failures
 *       to the connection as it reports any call's ({@code EtcdRegistrarIo}).
 *   <li>A stream that etcd ends with a refusal (say, a lease whose keys the user may not write) refused the oldest
 *       unanswered request, the one it was handling: that waiter gets the refusal, classified by {@link EtcdErrors}.
 *       The waiters behind it did nothing wrong; each is sent once more on a new stream.
 *   <li>With credentials the stream carries a token in the {@code token} header (jetcd puts its token on its own
 *       stubs only), chosen by {@link StreamTokens}: jetcd's, so that the keepalives keep it alive, else one from
 *       {@code Auth/Authenticate} on the same channel. Since 3.5.28 etcd checks it on every keepalive (3.5.30 refuses
 *       a tokenless one; 3.4.23 checks none). A token etcd refused (expired after {@code --auth-token-ttl} unused, or
 *       forgotten by a restarted member) ends the stream for every waiter, and each keepalive is sent once more on a
 *       stream opened with a new token (one authentication, however many waited).
 * </ul>
 * {@link #keepAlive} is bounded by its timeout in all, retries and a stream's opening included.
 *
 * <p>Thread-safe. {@link #keepAlive} is called by many registrations' loops at once and blocks its caller for at
 * most its timeout. Opening a stream (capturing the channel, finding a token) is done by one caller, with no lock
 * held, while the others wait on its future, each up to its own deadline. The stream's callbacks run on gRPC's
 * executor. One lock, this object's monitor, guards the stream's state and its waiters; it is held for no I/O, only
 * for writing a request (grpc-java buffers it without blocking; a {@code StreamObserver} must not be written from
 * two threads at once, and the lock serializes the writes) and cancelling. Waiters are failed after releasing it.
 * {@link #close()} may be called from any thread.
 */
final class KeepAliveStream implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KeepAliveStream.class);
  private static final Metadata.Key<String> TOKEN = Metadata.Key.of("token", Metadata.ASCII_STRING_MARSHALLER);

  private final Client client;
  private final ChannelCapture capture;
  private final StreamTokens tokens; // null without credentials
  private final KeepAliveCounters counters;
  // guarded by this:
  private Stream current; // null until opened, and after it ended
  private CompletableFuture<Stream> opening; // the open under way, or null
  private boolean closed;

  KeepAliveStream(Client client, ChannelCapture capture, EtcdConfig.Credentials credentials,
      KeepAliveCounters counters) {
    this.client = client;
    this.capture = capture;
    this.tokens = credentials == null ? null : new StreamTokens(capture, credentials, counters.tokens, "keepalive");
    this.counters = counters;
  }

  /** The client whose channel this stream uses: the one a failure report is about. */
  Client client() {
    return client;
  }

  /**
   * One keepalive for {@code lease} on the shared stream; returns the TTL etcd granted. Blocks for at most
   * {@code timeout}.
   *
   * @throws EtcdCallException of kind {@link EtcdErrors.Kind#LEASE_NOT_FOUND} when etcd says the lease is gone
   *     (TTL 0), {@link EtcdErrors.Kind#UNAVAILABLE} when no answer came in time or the stream broke, or etcd's
   *     refusal classified by {@link EtcdErrors}
   */
  long keepAlive(long lease, Duration timeout) {
    String what = "keep lease " + Long.toHexString(lease) + " alive";
    long deadline = System.nanoTime() + timeout.toNanos();
    for (boolean retried = false; ; retried = true) {
      Stream s = stream(lease, deadline, what);
      Waiter w = s.send(lease);
      LeaseKeepAliveResponse answer;
      try {
        answer = s.await(w, deadline);
      } catch (TimeoutException e) {
        throw new EtcdCallException(what, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new EtcdCallException(what, e);
      } catch (ExecutionException e) {
        Throwable cause = e.getCause();
        if (!retried && (cause instanceof RefusedBeforeIt || EtcdErrors.tokenRefused(cause))) {
          counters.resent.increment();
          continue; // a new stream, with a new token when etcd refused this one (dropped when the stream ended)
        }
        throw new EtcdCallException(what, cause);
      }
      if (answer.getTTL() <= 0) {
        throw new EtcdCallException(what, Status.NOT_FOUND.withDescription("etcdserver: requested lease not found")
            .asRuntimeException());
      }
      return answer.getTTL();
    }
  }

  /** Ends the stream and fails its waiters as unavailable; later keepalives fail at once. Idempotent. */
  @Override
  public void close() {
    Stream s;
    synchronized (this) {
      closed = true;
      s = current;
      current = null;
    }
    if (s != null) {
      s.end(Status.UNAVAILABLE.withDescription("the etcd client was replaced or closed").asRuntimeException(), true);
    }
  }

  /** The open stream, or one opened now: by this caller, or by another one it waits for. */
  private Stream stream(long lease, long deadline, String what) {
    CompletableFuture<Stream> pending;
    boolean mine = false;
    synchronized (this) {
      if (closed) {
        throw new EtcdCallException(what, Status.UNAVAILABLE.withDescription("the etcd client was replaced or closed")
            .asRuntimeException());
      }
      if (current != null && !current.ended) {
        return current;
      }
      if (opening == null) {
        opening = new CompletableFuture<>();
        mine = true;
      }
      pending = opening;
    }
    if (mine) {
      Stream opened = null;
      Throwable failure = null;
      try {
        opened = open(lease, deadline);
      } catch (ExecutionException e) {
        failure = e.getCause();
      } catch (TimeoutException | RuntimeException e) {
        failure = e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failure = e;
      }
      boolean closedMeanwhile;
      synchronized (this) {
        opening = null;
        closedMeanwhile = closed;
        if (opened != null && !closedMeanwhile) {
          current = opened; // if it has ended already, the next caller opens another
        }
      }
      if (opened != null && closedMeanwhile) {
        opened.end(Status.UNAVAILABLE.withDescription("the etcd client was replaced or closed").asRuntimeException(),
            true);
      }
      if (failure instanceof InterruptedException) {
        pending.completeExceptionally(Status.UNAVAILABLE.withDescription("opening the keepalive stream was interrupted")
            .asRuntimeException());
        throw new EtcdCallException(what, failure);
      }
      if (failure != null) {
        pending.completeExceptionally(failure);
      } else {
        pending.complete(opened);
      }
    }
    return await(pending, deadline, what);
  }

  /** Captures the channel, finds a token when there are credentials, and starts a stream. No lock held. */
  private Stream open(long lease, long deadline) throws ExecutionException, TimeoutException, InterruptedException {
    // Nothing has called through the client yet: a lease read makes jetcd call (authenticating first, with
    // credentials), and the interceptor sees the channel and jetcd's token.
    CompletableFuture<?> read = capture.channel().isDone() ? null
        : client.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT);
    Channel channel = capture.channel(read, deadline);
    String t = tokens == null ? null : tokens.forNewStream(channel, read, deadline);
    LeaseGrpc.LeaseStub stub = LeaseGrpc.newStub(channel);
    if (t != null) {
      Metadata headers = new Metadata();
      headers.put(TOKEN, t);
      stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }
    Stream s = new Stream(t);
    stub.leaseKeepAlive(s); // s keeps the request side in beforeStart
    counters.streams.increment();
    return s;
  }

  private static <T> T await(CompletableFuture<T> f, long deadline, String what) {
    try {
      return f.get(remaining(deadline), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new EtcdCallException(what, e);
    } catch (ExecutionException e) {
      throw new EtcdCallException(what, e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new EtcdCallException(what, e);
    }
  }

  private static long remaining(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  /** A keepalive waiting for its answer. */
  private static final class Waiter extends CompletableFuture<LeaseKeepAliveResponse> {
    final long lease;
    /** It timed out; it stays queued until its answer comes, and takes it. Guarded by the stream's lock. */
    boolean abandoned;

    Waiter(long lease) {
      this.lease = lease;
    }
  }

  /**
   * What a waiter gets when etcd ended its stream refusing an earlier request: it was not handled, and is sent once
   * more on a new stream. As a final outcome (on the second try) it reads as unavailable.
   */
  private static final class RefusedBeforeIt extends StatusRuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedBeforeIt(Throwable refusal) {
      super(Status.UNAVAILABLE.withDescription("etcd ended the keepalive stream, refusing an earlier keepalive on it: "
          + EtcdErrors.describe(refusal)).withCause(refusal), null);
    }
  }

  /** One LeaseKeepAlive call: its request side, and its waiters in the order their requests were written. */
  private final class Stream implements ClientResponseObserver<LeaseKeepAliveRequest, LeaseKeepAliveResponse> {
    private final String token; // the token it was opened with, or null
    // guarded by KeepAliveStream.this:
    private ClientCallStreamObserver<LeaseKeepAliveRequest> requests;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    private boolean ended;
    private Throwable endedWith; // what a keepalive sent after the end gets

    Stream(String token) {
      this.token = token;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<LeaseKeepAliveRequest> requestStream) {
      synchronized (KeepAliveStream.this) {
        requests = requestStream;
      }
    }

    /** Writes one request; the waiter fails at once if the stream has ended. */
    Waiter send(long lease) {
      Waiter w = new Waiter(lease);
      Throwable endedBefore = null;
      RuntimeException writeFailed = null;
      synchronized (KeepAliveStream.this) {
        if (ended) {
          endedBefore = endedWith;
        } else {
          try {
            requests.onNext(LeaseKeepAliveRequest.newBuilder().setID(lease).build());
            waiters.add(w);
            counters.sent.increment();
          } catch (RuntimeException e) { // gRPC refused the write (a call it has closed): the stream is done
            writeFailed = e;
          }
        }
      }
      if (endedBefore != null) {
        w.completeExceptionally(endedBefore);
        counters.failed.increment();
      } else if (writeFailed != null) {
        w.completeExceptionally(writeFailed);
        end(Status.UNAVAILABLE.withDescription("the keepalive stream refused a write").withCause(writeFailed)
            .asRuntimeException(), true);
      }
      return w;
    }

    /**
     * The answer to {@code w}. On a timeout or an interrupt {@code w} is abandoned (see the class comment), unless
     * its outcome arrived meanwhile, which is then returned.
     */
    LeaseKeepAliveResponse await(Waiter w, long deadline)
        throws TimeoutException, ExecutionException, InterruptedException {
      try {
        return w.get(remaining(deadline), TimeUnit.NANOSECONDS);
      } catch (TimeoutException | InterruptedException e) {
        boolean queued;
        synchronized (KeepAliveStream.this) {
          queued = waiters.contains(w);
          w.abandoned = queued;
        }
        if (!queued) { // answered or failed just now, by a thread that took it off the queue and completes it
          try {
            return w.get();
          } finally {
            if (e instanceof InterruptedException) {
              Thread.currentThread().interrupt();
            }
          }
        }
        throw e;
      }
    }

    @Override
    public void onNext(LeaseKeepAliveResponse answer) {
      Waiter w = null;
      synchronized (KeepAliveStream.this) {
        for (Iterator<Waiter> it = waiters.iterator(); it.hasNext(); ) {
          Waiter o = it.next();
          if (o.lease == answer.getID()) {
            it.remove();
            w = o;
            break;
          }
        }
      }
      if (w != null) {
        counters.answered.increment();
        w.complete(answer); // false for an abandoned waiter: the late answer ends with it
      }
    }

    @Override
    public void onError(Throwable t) {
      end(t, false);
    }

    @Override
    public void onCompleted() {
      end(Status.UNAVAILABLE.withDescription("etcd ended the keepalive stream").asRuntimeException(), false);
    }

    /**
     * Ends the stream with {@code t}, once. A failure that classifies as unavailable (the connection; also a token
     * etcd refused, which each waiter's retry renews) fails every waiter with it; any other refusal goes to the oldest
     * waiter, the request etcd was handling, and the others are sent again (see the class comment).
     */
    void end(Throwable t, boolean cancel) {
      boolean everyone = cancel || EtcdErrors.classify(t) == EtcdErrors.Kind.UNAVAILABLE;
      List<Waiter> failing;
      List<Throwable> reasons;
      synchronized (KeepAliveStream.this) {
        if (ended) {
          return;
        }
        ended = true;
        endedWith = everyone ? t : new RefusedBeforeIt(t);
        if (current == this) {
          current = null;
        }
        if (token != null && EtcdErrors.tokenRefused(t)) {
          tokens.refused(token); // the next stream is opened with a new one
        }
        failing = new ArrayList<>(waiters.size());
        reasons = new ArrayList<>(waiters.size());
        boolean oldest = true;
        for (Waiter w : waiters) {
          if (!w.abandoned) { // nobody waits for an abandoned one
            failing.add(w);
            reasons.add(everyone || oldest ? t : endedWith);
          }
          oldest = false;
        }
        waiters.clear();
        if (cancel && requests != null) {
          requests.cancel("Muster ended the keepalive stream", t);
        }
      }
      counters.ended.increment();
      log.debug("the keepalive stream on {} ended ({} waiting): {}", client, failing.size(), EtcdErrors.describe(t));
      for (int i = 0; i < failing.size(); i++) {
        if (failing.get(i).completeExceptionally(reasons.get(i))) {
          counters.failed.increment();
        }
      }
    }
  }
}
