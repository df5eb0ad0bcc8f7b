package dev.muster.testing.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;

/**
 * A tiny client for etcd's HTTP endpoints ({@code /version}, {@code /health}) and its JSON gRPC gateway
 * ({@code /v3/maintenance/status}, {@code /v3/kv/compaction}). The launcher uses it instead of jetcd so that
 * health checks have a hard per-call deadline and no reconnect logic of their own.
 *
 * <p>Thread-safe: the underlying {@link HttpClient} is.
 */
public final class EtcdHttp {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** gRPC's OUT_OF_RANGE: etcd's code for a compaction at or below the compacted revision, or above the current. */
  private static final int OUT_OF_RANGE = 11;
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(1))
      .build();

  /** Clients for TLS members, by {@code host:port}; a member not listed is reached over plain HTTP. */
  private static final Map<String, HttpClient> TLS = new ConcurrentHashMap<>();

  /** Reaches the member at {@code clientUrl} (https) with {@code ssl}. */
  public static void useTls(URI clientUrl, SSLContext ssl) {
    TLS.put(clientUrl.getAuthority(), HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(1))
        .sslContext(ssl)
        .build());
  }

  /** Root's credentials for the member at a client URL, for the calls that need them (compaction). */
  private static final Map<String, String[]> AUTH = new ConcurrentHashMap<>();

  /** Authenticates calls that need it (compaction) to the member at {@code clientUrl} as {@code user}. */
  public static void useAuth(URI clientUrl, String user, String password) {
    AUTH.put(clientUrl.getAuthority(), new String[] {user, password});
  }

  /** Whether etcd authentication is on: an anonymous read is refused for want of a user. */
  public static boolean authEnabled(URI clientUrl, Duration timeout) {
    JsonNode reply = post(clientUrl.resolve("/v3/kv/range"), "{\"key\":\"AA==\"}", timeout)
        .orElseThrow(() -> new IllegalStateException("etcd at " + clientUrl + " did not answer a read"));
    return error(reply).isPresent();
  }

  /**
   * The gateway's refusal in a reply, if it is one: {@code {"code":3,"message":"..."}} (3.4 adds the message again as
   * {@code "error"}; 3.5 does not).
   */
  static Optional<String> error(JsonNode reply) {
    return reply.has("code") && reply.path("code").asInt() != 0
        ? Optional.of(reply.path("message").asText(reply.path("error").asText()))
        : Optional.empty();
  }

  /** Adds {@code user} (role root) with {@code password} and enables authentication. */
  public static void enableAuth(URI clientUrl, String user, String password, Duration timeout) {
    String name = JSON.getNodeFactory().textNode(user).toString();
    String secret = JSON.getNodeFactory().textNode(password).toString();
    call(clientUrl, "/v3/auth/user/add", "{\"name\":" + name + ",\"password\":" + secret + "}", timeout);
    call(clientUrl, "/v3/auth/user/grant", "{\"user\":" + name + ",\"role\":\"root\"}", timeout);
    call(clientUrl, "/v3/auth/enable", "{}", timeout);
  }

  private static void call(URI clientUrl, String path, String body, Duration timeout) {
    JsonNode reply = post(clientUrl.resolve(path), body, timeout)
        .orElseThrow(() -> new IllegalStateException("etcd at " + clientUrl + " did not answer " + path));
    error(reply).ifPresent(why -> {
      throw new IllegalStateException("etcd at " + clientUrl + " refused " + path + ": " + why);
    });
  }

  /** The last token each member gave its configured user, by {@code host:port}; replaced when refused. */
  private static final Map<String, String> TOKENS = new ConcurrentHashMap<>();

  /** A new token for the member's configured user, or empty without one. */
  private static Optional<String> token(URI clientUrl, Duration timeout) {
    String[] credentials = AUTH.get(clientUrl.getAuthority());
    if (credentials == null) {
      return Optional.empty();
    }
    String body = "{\"name\":" + JSON.getNodeFactory().textNode(credentials[0]) + ",\"password\":"
        + JSON.getNodeFactory().textNode(credentials[1]) + "}";
    Optional<String> token = post(clientUrl.resolve("/v3/auth/authenticate"), body, timeout)
        .map(reply -> reply.path("token").asText(null));
    token.ifPresent(t -> TOKENS.put(clientUrl.getAuthority(), t));
    return token;
  }

  /**
   * A POST as the member's configured user when it has one (etcd 3.5 refuses {@code maintenance/status} to an
   * anonymous caller once auth is on; 3.4 answers it): with the last token first, and once more with a new token
   * when that one is refused (tokens expire after {@code --auth-token-ttl} unused). Without a configured user, a
   * plain POST.
   */
  private static Optional<JsonNode> postAs(URI clientUrl, String path, String body, Duration timeout) {
    String authority = clientUrl.getAuthority();
    if (!AUTH.containsKey(authority)) {
      return post(clientUrl.resolve(path), body, timeout);
    }
    Optional<String> cached = Optional.ofNullable(TOKENS.get(authority));
    Optional<JsonNode> reply = cached.isPresent() ? post(clientUrl.resolve(path), body, timeout, cached)
        : Optional.empty();
    if (reply.isPresent() && error(reply.get()).isEmpty()) {
      return reply;
    }
    Optional<String> fresh = token(clientUrl, timeout);
    return fresh.isPresent() ? post(clientUrl.resolve(path), body, timeout, fresh) : reply;
  }

  /** What {@code /v3/maintenance/status} says about the member that answered. */
  public record Status(String memberId, String leaderId, long revision, String clusterId, String version) {}

  private EtcdHttp() {}

  /** What {@code /version} says: the member's server version and the cluster version, e.g. 3.5.30 and 3.4.0. */
  public record Versions(String server, String cluster) {}

  /** The member's versions, or empty when it does not answer {@code /version} within {@code timeout}. */
  public static Optional<Versions> versions(URI clientUrl, Duration timeout) {
    return get(clientUrl.resolve("/version"), timeout)
        .map(body -> new Versions(body.path("etcdserver").asText(), body.path("etcdcluster").asText()));
  }

  /** True when the member answers {@code /version}: the process serves clients, quorum or not. */
  public static boolean answers(URI clientUrl, Duration timeout) {
    return get(clientUrl.resolve("/version"), timeout).isPresent();
  }

  /** True when the member reports {@code {"health":"true"}}: it has a leader and a quorum read succeeds. */
  public static boolean healthy(URI clientUrl, Duration timeout) {
    return get(clientUrl.resolve("/health"), timeout)
        .map(body -> "true".equals(body.path("health").asText()))
        .orElse(false);
  }

  /** The member's status, or empty when it does not answer within {@code timeout} or refuses. */
  public static Optional<Status> status(URI clientUrl, Duration timeout) {
    return postAs(clientUrl, "/v3/maintenance/status", "{}", timeout).filter(body -> error(body).isEmpty())
        .map(body -> new Status(
        body.path("header").path("member_id").asText(),
        body.path("leader").asText(),
        body.path("header").path("revision").asLong(),
        body.path("header").path("cluster_id").asText(),
        body.path("version").asText()));
  }

  /**
   * The cluster's current revision as a linearizable read sees it (the header of a count-only range), so it counts
   * every write acknowledged before the call, which a follower's own status may not have applied yet; empty when
   * the member does not answer within {@code timeout} or refuses (no quorum, for one).
   */
  public static Optional<Long> currentRevision(URI clientUrl, Duration timeout) {
    return postAs(clientUrl, "/v3/kv/range", "{\"key\":\"AA==\",\"count_only\":true}", timeout)
        .filter(body -> error(body).isEmpty())
        .map(body -> body.path("header").path("revision").asLong());
  }

  /**
   * Compacts the key space up to {@code revision} (physically). Returns normally when the revision is already
   * compacted; throws when the member does not answer or refuses for any other reason.
   */
  public static void compact(URI clientUrl, long revision, Duration timeout) {
    String body = "{\"revision\":\"" + revision + "\",\"physical\":true}";
    JsonNode reply = postAs(clientUrl, "/v3/kv/compaction", body, timeout)
        .orElseThrow(() -> new IllegalStateException("etcd at " + clientUrl + " did not answer a compaction"));
    Optional<String> refused = error(reply);
    // OUT_OF_RANGE is both "already compacted" (fine) and "a future revision" (not): only the text tells them apart.
    if (refused.isPresent() && !(reply.path("code").asInt() == OUT_OF_RANGE
        && refused.get().contains("required revision has been compacted"))) {
      throw new IllegalStateException("etcd at " + clientUrl + " refused compaction to " + revision + ": "
          + refused.get());
    }
  }

  private static Optional<JsonNode> get(URI uri, Duration timeout) {
    return send(HttpRequest.newBuilder(uri).timeout(timeout).GET().build());
  }

  private static Optional<JsonNode> post(URI uri, String body, Duration timeout) {
    return post(uri, body, timeout, Optional.empty());
  }

  private static Optional<JsonNode> post(URI uri, String body, Duration timeout, Optional<String> token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    token.ifPresent(t -> request.header("Authorization", t));
    return send(request.build());
  }

  private static Optional<JsonNode> send(HttpRequest request) {
    try {
      HttpResponse<String> response = TLS.getOrDefault(request.uri().getAuthority(), HTTP)
          .send(request, HttpResponse.BodyHandlers.ofString());
      return Optional.of(JSON.readTree(response.body()));
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }
}
