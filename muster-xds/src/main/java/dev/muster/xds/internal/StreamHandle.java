package dev.muster.xds.internal;

import dev.muster.internal.Json;
import dev.muster.internal.SerialExecutor;
import dev.muster.xds.internal.AdsStream.Outcome;
import dev.muster.xds.internal.AdsStream.Request;
import dev.muster.xds.internal.AdsStream.Response;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime of one ADS stream: hands the client's requests and the services' changes to the stream's
 * {@link AdsStream} on one serial executor, sends what it answers, and keeps the stream's subscriptions to the
 * services' feeds in step with its EDS names.
 *
 * <p>Thread-safe: gRPC calls {@link #onNext}, {@link #onError} and {@link #onCompleted} (one at a time), a feed
 * calls {@link #assignmentChanged} from its own thread; each only queues a task on the stream's serial executor,
 * which alone touches the state machine, the subscriptions and the response observer. A client that reads slowly
 * gets at most one pending response per type, the newest (state of the world makes the ones between worthless),
 * sent when its transport is ready again.
 */
final class StreamHandle implements StreamObserver<DiscoveryRequest>, ServiceFeed.Subscriber {
  private static final Logger log = LoggerFactory.getLogger(StreamHandle.class);

  /** What the server counts and is told about its streams. */
  interface Server {
    ServiceFeeds feeds();

    void counted(Outcome o, XdsType type, String node, String refusal);

    void sent(XdsType type, int bytes);

    /** A client accepted an assignment made from a change the server heard at {@code stamp} (nanoTime). */
    void applied(long stamp);

    /** An assignment made from a change the server heard at {@code stamp} (nanoTime) went to the transport. */
    void written(long stamp);

    void closed(StreamHandle h);

    /** Resource names one request of a type may carry ({@code XdsConfig.maxNames}). */
    int maxNames();

    /** This stream is being ended for going over a limit: {@code why} says which. */
    void refused(String node, String why);
  }

  private final long id;
  private final Server server;
  private final ServerCallStreamObserver<DiscoveryResponse> out;
  private final SerialExecutor loop;
  // the loop's state
  private AdsStream stream;
  private String node = "?";
  private final Set<String> subscribed = new HashSet<>();
  private final Map<XdsType, DiscoveryResponse> pending = new EnumMap<>(XdsType.class);
  private final Set<String> ignoredTypes = new HashSet<>();
  private String edsNonce; // the last assignment response sent, and the stamp of the change it carries
  private long edsStamp;
  private boolean closed;

  StreamHandle(long id, Server server, StreamObserver<DiscoveryResponse> out, Executor pool) {
    this.id = id;
    this.server = server;
    this.out = (ServerCallStreamObserver<DiscoveryResponse>) out;
    this.loop = new SerialExecutor(pool);
    this.out.setOnReadyHandler(() -> loop.execute(this::flush));
    this.out.setOnCancelHandler(() -> loop.execute(() -> closeAfter("the call was cancelled")));
  }

  @Override
  public void onNext(DiscoveryRequest r) {
    loop.execute(() -> take(r));
  }

  @Override
  public void onError(Throwable t) {
    loop.execute(() -> closeAfter("the client's error: " + Status.fromThrowable(t)));
  }

  @Override
  public void onCompleted() {
    loop.execute(() -> {
      if (!closed) {
        out.onCompleted();
      }
      closeAfter("the client completed it");
    });
  }

  @Override
  public void assignmentChanged() {
    loop.execute(() -> {
      if (!closed && stream != null) {
        send(stream.onChange(XdsType.ENDPOINT));
      }
    });
  }

  private void take(DiscoveryRequest r) {
    if (closed) {
      return;
    }
    if (stream == null) { // the node comes with the first request (Node's client sends it only then)
      String zone = r.getNode().getLocality().getZone();
      // the client's own words: quoted and escaped, so a node id holding a line feed cannot forge a log line
      // and the stream's number: two clients may share a node id, and one client reconnects on a new stream
      node = r.getNode().getId().isEmpty() ? "stream-" + id : Json.show(r.getNode().getId()) + " (stream " + id + ")";
      stream = new AdsStream(server.feeds(), zone.isEmpty() ? null : zone);
    }
    if (r.getResourceNamesCount() > server.maxNames()) {
      end("this xds server takes at most " + server.maxNames() + " resource names in one request (--max-names); "
          + "this stream asked for " + r.getResourceNamesCount() + " of " + Json.show(r.getTypeUrl())
          + ": spread them over more streams, or raise the limit");
      return;
    }
    XdsType type = XdsType.of(r.getTypeUrl()).orElse(null);
    if (type == null) {
      if (ignoredTypes.add(r.getTypeUrl())) {
        log.warn("{}: asks for {}, which this server does not serve; ignored", node, Json.show(r.getTypeUrl()));
      }
      return;
    }
    String error = r.hasErrorDetail() ? r.getErrorDetail().getMessage() : null;
    Outcome o = stream.onRequest(new Request(type, r.getResourceNamesList(), r.getVersionInfo(),
        r.getResponseNonce(), error));
    server.counted(o, type, node, error);
    if (log.isDebugEnabled()) {
      log.debug("{}: {} {} version {} nonce {} names {}", node, o.kind(), type, Json.show(r.getVersionInfo()),
          Json.show(r.getResponseNonce()), r.getResourceNamesList().stream().map(Json::show).toList());
    }
    if (type == XdsType.ENDPOINT && o.kind() == AdsStream.Kind.ACK && r.getResponseNonce().equals(edsNonce)
        && edsStamp != 0) {
      server.applied(edsStamp);
      edsStamp = 0;
    }
    boolean joined = type == XdsType.ENDPOINT && o.kind() != AdsStream.Kind.STALE
        && follow(stream.names(XdsType.ENDPOINT));
    send(o.response());
    if (joined) {
      // The response was read before this stream subscribed: a change the feed published in between told the
      // feed's subscribers only. Read again; an unchanged content sends nothing.
      send(stream.onChange(XdsType.ENDPOINT));
    }
  }

  /**
   * Subscribes to the feeds of the services now named, and leaves the others; ends the stream at the limit. True if
   * it subscribed to a feed it did not follow before.
   */
  private boolean follow(Set<String> names) {
    boolean joined = false;
    for (String s : names) {
      if (subscribed.contains(s)) {
        continue;
      }
      switch (server.feeds().subscribe(s, this)) {
        case SUBSCRIBED -> {
          subscribed.add(s);
          joined = true;
        }
        case INVALID -> { } // reported missing: the client's own timeout says so
        case FULL -> {
          end("this xds server follows at most " + server.feeds().maxFeeds() + " services at once (--max-services),"
              + " and " + s + " would be one more: try another server, or raise the limit");
          return false;
        }
      }
    }
    for (Iterator<String> it = subscribed.iterator(); it.hasNext(); ) {
      String s = it.next();
      if (!names.contains(s)) {
        it.remove();
        server.feeds().unsubscribe(s, this);
      }
    }
    return joined;
  }

  private void send(Response r) {
    if (r == null || closed) {
      return;
    }
    if (r.type() == XdsType.ENDPOINT) {
      edsNonce = r.nonce();
      edsStamp = r.stamp();
    }
    DiscoveryResponse msg = DiscoveryResponse.newBuilder().setTypeUrl(r.type().typeUrl())
        .setVersionInfo(r.version()).setNonce(r.nonce()).addAllResources(r.resources()).build();
    if (pending.isEmpty() && out.isReady()) {
      write(r.type(), msg);
      if (r.type() == XdsType.ENDPOINT && r.stamp() != 0) {
        server.written(r.stamp());
      }
    } else {
      log.debug("{}: holds {} version {} until the transport is ready", node, r.type(), r.version());
      pending.put(r.type(), msg); // replaces an older one of the type: the client never saw it
    }
  }

  private void flush() {
    for (Iterator<Map.Entry<XdsType, DiscoveryResponse>> it = pending.entrySet().iterator();
        it.hasNext() && !closed && out.isReady(); ) {
      Map.Entry<XdsType, DiscoveryResponse> e = it.next();
      it.remove();
      write(e.getKey(), e.getValue());
    }
  }

  private void write(XdsType type, DiscoveryResponse msg) {
    try {
      if (log.isDebugEnabled()) {
        log.debug("{}: sends {} version {} nonce {}, {} resources", node, type, msg.getVersionInfo(),
            msg.getNonce(), msg.getResourcesCount());
      }
      out.onNext(msg);
      server.sent(type, msg.getSerializedSize());
    } catch (RuntimeException e) { // the call was cancelled meanwhile
      log.debug("{}: send failed: {}", node, e.toString());
      close();
    }
  }

  private void closeAfter(String why) {
    if (!closed) {
      log.debug("{}: stream closed: {}", node, why);
    }
    close();
  }

  /** Ends the stream: drops every subscription and tells the server. */
  private void close() {
    if (closed) {
      return;
    }
    closed = true;
    pending.clear();
    for (String s : subscribed) {
      server.feeds().unsubscribe(s, this);
    }
    subscribed.clear();
    server.closed(this);
  }

  /** Refuses the stream (the server is at its limit, or closing). */
  void refuse(Status status) {
    loop.execute(() -> {
      if (!closed) {
        out.onError(status.asRuntimeException());
        close();
      }
    });
  }

  /** Ends the stream with RESOURCE_EXHAUSTED saying {@code why} (on the loop). */
  private void end(String why) {
    server.refused(node, why);
    out.onError(Status.RESOURCE_EXHAUSTED.withDescription(why).asRuntimeException());
    close();
  }

  long id() {
    return id;
  }

  String node() {
    return node;
  }
}
