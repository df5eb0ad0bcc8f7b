package dev.muster.etcd.internal;

import dev.muster.etcd.EtcdConfig;
import io.etcd.jetcd.api.AuthGrpc;
import io.etcd.jetcd.api.AuthenticateRequest;
import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Which token a stream Muster writes itself ({@link KeepAliveStream}, {@link WatchStream}) opens its next call with,
 * when the connection has credentials. Each of the two has its own instance.
 *
 * <p>jetcd's own, as {@link ChannelCapture} saw it in jetcd's {@code Auth/Authenticate} answers (see there for why):
 * on 3.5.28+ the keepalives then keep it alive. Else a token the stream fetched itself from {@code Auth/Authenticate}
 * on the same channel. A token etcd refused on a stream is never used again (an expired token does not come back),
 * and after a refusal the next stream always gets a new token of its own: jetcd's may have expired too, unused since
 * jetcd fetched it, and the keepalives waiting for that stream have one try left. A wrong password or auth not
 * enabled is reported as jetcd reports its own token request's: UNAUTHENTICATED caused by etcd's answer, which
 * {@link EtcdErrors} classifies as refused credentials.
 *
 * <p>Thread-safe. {@link #forNewStream} is called by the stream's one opener at a time and may block (awaiting
 * jetcd's read, authenticating) with no lock held; {@link #refused} is called under the stream's lock and only
 * records. This object's own lock guards its fields and is never held across I/O.
 */
final class StreamTokens {
  private final ChannelCapture capture;
  private final EtcdConfig.Credentials credentials;
  private final LongAdder newTokens;
  private final String stream;
  // guarded by this:
  private String own; // the last token fetched here, or null
  private String last; // the token of the last stream opened, or null
  private boolean renew; // etcd refused a stream's token since the last one was fetched here
  /** Tokens etcd refused on a stream. The last few are enough: a stream is opened with the newest usable one. */
  private final Set<String> refused = Collections.newSetFromMap(new LinkedHashMap<>() {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > 8;
    }
  });

  /**
   * {@code newTokens} counts each token a new stream uses that the last one did not; {@code stream} names the
   * stream in a refusal's message ("keepalive", "watch").
   */
  StreamTokens(ChannelCapture capture, EtcdConfig.Credentials credentials, LongAdder newTokens, String stream) {
    this.capture = capture;
    this.credentials = credentials;
    this.newTokens = newTokens;
    this.stream = stream;
  }

  /**
   * The token for a new stream on {@code channel}. {@code read} is a call that the stream started through jetcd to
   * reach the channel, or null: jetcd authenticated for it, so its answer is awaited before fetching a token here.
   */
  String forNewStream(Channel channel, CompletableFuture<?> read, long deadlineNanos)
      throws TimeoutException, InterruptedException {
    boolean fresh;
    synchronized (this) {
      fresh = renew;
    }
    String t = fresh ? null : usable();
    if (t == null && read != null && !fresh) {
      try {
        read.get(remaining(deadlineNanos), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        // the read's own outcome does not matter here, only whether jetcd got a token
      }
      t = usable();
    }
    if (t == null) {
      t = authenticate(channel, deadlineNanos);
      synchronized (this) {
        own = t;
        renew = false;
      }
    }
    synchronized (this) {
      if (!t.equals(last)) {
        last = t;
        newTokens.increment();
      }
    }
    return t;
  }

  /** etcd refused {@code token} on a stream. */
  synchronized void refused(String token) {
    refused.add(token);
    renew = true;
  }

  /** jetcd's token, else the last one fetched here, unless etcd refused it; null when neither. */
  private synchronized String usable() {
    String shared = capture.token();
    if (shared != null && !refused.contains(shared)) {
      return shared;
    }
    return own != null && !refused.contains(own) ? own : null;
  }

  private String authenticate(Channel channel, long deadlineNanos) {
    try {
      return AuthGrpc.newBlockingStub(channel).withDeadlineAfter(remaining(deadlineNanos), TimeUnit.NANOSECONDS)
          .authenticate(AuthenticateRequest.newBuilder().setName(credentials.user())
              .setPassword(credentials.password()).build())
          .getToken();
    } catch (StatusRuntimeException e) {
      if (EtcdErrors.classify(e) == EtcdErrors.Kind.UNAVAILABLE) {
        throw e;
      }
      throw Status.UNAUTHENTICATED.withDescription("etcd refused the " + stream + " stream's token request").withCause(e)
          .asRuntimeException();
    }
  }

  private static long remaining(long deadlineNanos) {
    return Math.max(0, deadlineNanos - System.nanoTime());
  }
}
