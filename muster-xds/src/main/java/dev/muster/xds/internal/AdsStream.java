package dev.muster.xds.internal;

import com.google.protobuf.Any;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/*
 * One ADS stream, state of the world (docs/design-xds.md §4). Per type it keeps the subscribed names, the last
 * response (its version, nonce and content: name -> resource version) and the content the client last refused.
 *
 *   request, nonce empty or no response of the type sent yet  -> INITIAL: take the names, send if there is content
 *   request, nonce = the last sent, no error_detail           -> ACK: take the names, send if the content changed
 *   request, nonce = the last sent, error_detail              -> NACK: remember the refused content; send only a
 *                                                                content that differs from it and from the last sent
 *   request, nonce = an older response's                      -> STALE: ignored (the client answers the newer one
 *                                                                with its current names)
 *   a resource of the type changed                            -> send if the content changed (and was not refused)
 *
 * A response carries every subscribed resource of its type that exists. RDS and EDS never get an empty response
 * (it says nothing); LDS and CDS do when nothing asked for exists (the client then knows at once).
 */
/**
 * The protocol of one ADS stream as a state machine: sans-I/O, no threads, no clock. It takes the client's
 * requests and the news that resources changed, and says what to send.
 *
 * <p>Not thread-safe: the stream's serial executor makes every call.
 */
final class AdsStream {
  /** What the stream's resources are read from; called on the stream's executor. */
  interface Catalog {
    /**
     * The resource {@code name} of {@code type} as a client in {@code zone} (null: none given) should see it, or
     * null if it does not exist (or, for an assignment, is not known yet).
     */
    Resource resource(XdsType type, String name, String zone);
  }

  /**
   * A resource as served: its name, its own version (what it was built from), its message, and an opaque stamp the
   * runtime gave the change it came from (0: none), which the stream only carries through to its response.
   */
  record Resource(String name, String version, Any body, long stamp) {
    Resource {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(version, "version");
      Objects.requireNonNull(body, "body");
    }

    Resource(String name, String version, Any body) {
      this(name, version, body, 0);
    }
  }

  /** A client's request, as the stream needs it; {@code error} is error_detail's message, or null for none. */
  record Request(XdsType type, List<String> names, String versionInfo, String nonce, String error) {
    Request {
      names = List.copyOf(names);
      versionInfo = versionInfo == null ? "" : versionInfo;
      nonce = nonce == null ? "" : nonce;
    }
  }

  /** A response to send: a version and nonce of this stream, the resources, and the newest of their stamps. */
  record Response(XdsType type, String version, String nonce, List<Any> resources, long stamp) {}

  /** What a request was. */
  enum Kind { INITIAL, ACK, NACK, STALE }

  /** What a request was, and the response it called for (null: none). */
  record Outcome(Kind kind, Response response) {}

  private static final class TypeState {
    Set<String> names = Set.of();
    /** The last response's content, name -> resource version; null before the first. */
    Map<String, String> sent;
    String sentNonce;
    String sentVersion;
    String ackedVersion = "";
    /** The content of the response the client refused last; null when its last answer was an ACK. */
    Map<String, String> refused;
    String refusal;
    long versions;
  }

  private final Catalog catalog;
  private final String zone;
  private final Map<XdsType, TypeState> types = new EnumMap<>(XdsType.class);
  private long nonces;
  private long acks;
  private long nacks;
  private long stale;
  private long responses;

  /** A stream for a client in {@code zone} (its node's locality; null for none). */
  AdsStream(Catalog catalog, String zone) {
    this.catalog = Objects.requireNonNull(catalog, "catalog");
    this.zone = zone;
    for (XdsType t : XdsType.values()) {
      types.put(t, new TypeState());
    }
  }

  /** Takes a client's request: what it was, and what to send now (if anything). */
  Outcome onRequest(Request r) {
    TypeState s = types.get(r.type());
    Kind kind;
    if (r.nonce().isEmpty() || s.sentNonce == null) {
      kind = Kind.INITIAL;
    } else if (!r.nonce().equals(s.sentNonce)) {
      stale++;
      return new Outcome(Kind.STALE, null);
    } else if (r.error() != null) {
      kind = Kind.NACK;
      nacks++;
      s.refused = s.sent;
      s.refusal = r.error();
    } else {
      kind = Kind.ACK;
      acks++;
      s.ackedVersion = r.versionInfo();
      s.refused = null;
      s.refusal = null;
    }
    s.names = Collections.unmodifiableSet(new LinkedHashSet<>(r.names()));
    return new Outcome(kind, respond(r.type(), s));
  }

  /** Some resource of {@code type} changed: the response to send, or null if this stream's content is unchanged. */
  Response onChange(XdsType type) {
    TypeState s = types.get(type);
    return s.names.isEmpty() ? null : respond(type, s);
  }

  private Response respond(XdsType type, TypeState s) {
    Map<String, String> content = new LinkedHashMap<>();
    List<Any> bodies = new ArrayList<>();
    long stamp = 0;
    for (String name : s.names) {
      Resource res = catalog.resource(type, name, zone);
      if (res != null) {
        content.put(name, res.version());
        bodies.add(res.body());
        stamp = Math.max(stamp, res.stamp());
      }
    }
    if (content.isEmpty() && (!type.fullState() || s.names.isEmpty())) {
      return null; // RDS/EDS: an empty response says nothing; nothing asked: nothing to say
    }
    if (content.equals(s.sent) || content.equals(s.refused)) {
      return null;
    }
    s.sent = content;
    s.sentVersion = Long.toString(++s.versions);
    s.sentNonce = Long.toString(++nonces);
    responses++;
    return new Response(type, s.sentVersion, s.sentNonce, List.copyOf(bodies), stamp);
  }

  /** The names the client subscribes to for {@code type}. */
  Set<String> names(XdsType type) {
    return types.get(type).names;
  }

  String zone() {
    return zone;
  }

  /** The version the client last accepted for {@code type} ("" for none). */
  String ackedVersion(XdsType type) {
    return types.get(type).ackedVersion;
  }

  /** The client's message with its last refusal of {@code type}, or null if it accepted the last response. */
  String refusal(XdsType type) {
    return types.get(type).refusal;
  }

  long acks() {
    return acks;
  }

  long nacks() {
    return nacks;
  }

  long staleRequests() {
    return stale;
  }

  long responses() {
    return responses;
  }
}
