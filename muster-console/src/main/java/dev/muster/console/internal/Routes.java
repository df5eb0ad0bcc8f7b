package dev.muster.console.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.muster.AccessDeniedException;
import dev.muster.InvalidInputException;
import dev.muster.MusterException;
import dev.muster.RegistryUnavailableException;
import dev.muster.console.ConsoleConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.channels.ClosedByInterruptException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The console's HTTP surface: three static files from the jar (no login needed: they hold no data), and the API:
 * {@code POST /api/login} (the token for a session cookie), {@code /api/session} (whether drain is allowed, and the
 * CSRF token when it is), {@code /api/stream} (one SSE stream per page), {@code POST /api/drain} and
 * {@code /api/prometheus-sd} (Prometheus's HTTP service discovery, {@link PrometheusSd}).
 *
 * <p>What is refused, in this order: any request while the HTTP queue is full (503, {@link HttpPool}); a request
 * whose {@code Host} is not one of the console's names (421: a DNS-rebinding page cannot read the console, wildcard
 * bind too); an API request without the token (401, {@link Access}); a login or a drain from a page whose
 * {@code Origin} is not the console's (403); a drain by a logged-in page without the CSRF token (403). Every answer
 * carries {@code Content-Security-Policy: default-src 'self'} and {@code nosniff}. Handlers run on the HTTP pool's
 * threads; a stream holds its thread while it is open; this class keeps no mutable state.
 */
final class Routes {
  private static final Map<String, String> STATIC = Map.of(
      "/", "index.html", "/index.html", "index.html", "/console.css", "console.css", "/console.js", "console.js");
  private static final Map<String, String> TYPES = Map.of(
      "html", "text/html; charset=utf-8", "css", "text/css; charset=utf-8", "js", "text/javascript; charset=utf-8");
  private static final Set<String> PAGES = Set.of("overview", "service", "events", "cluster");
  private static final int MAX_BODY = 4096;

  private final Pump pump;
  private final EventRing ring;
  private final EtcdMaintenance etcd;
  private final ConsoleConfig config;
  private final Set<String> hosts;
  private final Access access;
  private final ConsoleCounters counters;
  private final ScheduledExecutorService timer;

  Routes(Pump pump, EventRing ring, EtcdMaintenance etcd, ConsoleConfig config, Set<String> hosts, Access access,
      ConsoleCounters counters, ScheduledExecutorService timer) {
    this.timer = timer;
    this.pump = pump;
    this.counters = counters;
    this.ring = ring;
    this.etcd = etcd;
    this.config = config;
    this.hosts = hosts;
    this.access = access;
  }

  /**
   * The {@code host:port} values (lower case) a browser may send in {@code Host}: the bound IP's; on loopback also
   * {@code localhost}, {@code 127.0.0.1} and {@code [::1]}; on the wildcard, those and each of {@code interfaces};
   * and each of {@code extra} ({@code NAME} on the bound port, or {@code NAME:PORT}). Never empty: the check is
   * always on.
   */
  static Set<String> allowedHosts(InetSocketAddress bound, List<String> extra, List<InetAddress> interfaces) {
    int port = bound.getPort();
    Set<String> out = new LinkedHashSet<>();
    InetAddress ip = bound.getAddress();
    if (!ip.isAnyLocalAddress()) {
      out.add(literal(ip) + ":" + port);
    }
    if (ip.isLoopbackAddress() || ip.isAnyLocalAddress()) {
      out.addAll(List.of("localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port));
    }
    for (InetAddress a : interfaces) {
      out.add(literal(a) + ":" + port);
    }
    for (String h : extra) {
      String lower = h.toLowerCase(Locale.ROOT);
      out.add(hasPort(lower) ? lower : lower + ":" + port);
    }
    return Set.copyOf(out);
  }

  /** A {@code Host} header as {@code host:port}, lower case; no port is 80, as a browser leaves it out then. */
  static String normalHost(String host) {
    String lower = host.strip().toLowerCase(Locale.ROOT);
    return hasPort(lower) ? lower : lower + ":80";
  }

  private static boolean hasPort(String host) {
    int colon = host.lastIndexOf(':');
    return colon >= 0 && colon > host.lastIndexOf(']');
  }

  private static String literal(InetAddress a) {
    String ip = a.getHostAddress();
    int scope = ip.indexOf('%');
    if (scope >= 0) {
      ip = ip.substring(0, scope);
    }
    return ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip;
  }

  void install(HttpServer server) {
    server.createContext("/", this::handle);
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      answer(x);
    } finally {
      counters.answered(x.getResponseCode()); // -1 when no answer was sent: counted as other
    }
  }

  private void answer(HttpExchange x) throws IOException {
    Headers h = x.getResponseHeaders();
    h.set("Content-Security-Policy", "default-src 'self'");
    h.set("X-Content-Type-Options", "nosniff");
    h.set("X-Frame-Options", "DENY");
    h.set("Referrer-Policy", "no-referrer");
    h.set("Cache-Control", "no-store");
    if (HttpPool.overloaded()) {
      h.set("Retry-After", "1");
      h.set("Connection", "close");
      json(x, 503, error("the console is busy (" + HttpPool.QUEUE + " requests wait already): try again"));
      return;
    }
    String host = x.getRequestHeaders().getFirst("Host");
    if (host == null || !hosts.contains(normalHost(host))) {
      json(x, 421, error("this console answers only to " + new TreeSet<>(hosts) + ", not Host " + host
          + ": add the name with --allowed-host"));
      return;
    }
    String path = x.getRequestURI().getPath();
    String method = x.getRequestMethod();
    if (path.startsWith("/api/")) {
      api(x, path, method, host);
    } else if (!method.equals("GET")) {
      json(x, 405, error(method + " is not served here"));
    } else if (STATIC.containsKey(path)) {
      resource(x, STATIC.get(path));
    } else {
      json(x, 404, error("no such page: " + path));
    }
  }

  private void api(HttpExchange x, String path, String method, String host) throws IOException {
    if (path.equals("/api/login")) {
      login(x, method, host);
      return;
    }
    Access.Via via = access.check(x.getRequestHeaders());
    if (via == Access.Via.NONE) {
      json(x, 401, error("log in first: open the URL the console printed (http://.../#token=...), paste its token"
          + " on the page, or send Authorization: Bearer TOKEN"));
      return;
    }
    if (path.equals("/api/drain")) {
      drain(x, method, host, via);
    } else if (!method.equals("GET")) {
      json(x, 405, error(method + " is not served here"));
    } else if (path.equals("/api/session")) {
      ObjectNode s = Views.JSON.createObjectNode();
      s.put("allowDrain", config.allowDrain());
      s.put("showLeases", config.showLeases());
      if (config.allowDrain()) {
        s.put("token", access.csrf());
      }
      json(x, 200, s);
    } else if (path.equals("/api/stream")) {
      stream(x);
    } else if (path.equals("/api/prometheus-sd")) {
      String ns = query(x.getRequestURI().getRawQuery()).get("namespace");
      json(x, 200, PrometheusSd.targets(pump.services(), ns));
    } else {
      json(x, 404, error("no such page: " + path));
    }
  }

  /** The token (JSON {@code {"token": ...}}) for the session cookie; only from a page of this console. */
  private void login(HttpExchange x, String method, String host) throws IOException {
    if (!method.equals("POST")) {
      json(x, 405, error("log in with POST"));
      return;
    }
    if (!sameOrigin(x, host)) {
      return;
    }
    JsonNode body = body(x, "a login sends {\"token\": \"...\"}");
    if (body == null) {
      return;
    }
    if (!access.matches(body.path("token").asText(null))) {
      json(x, 401, error("wrong token: give the one in the URL the console printed (after #token=) or in its"
          + " --token-file"));
      return;
    }
    x.getResponseHeaders().set("Set-Cookie", access.setCookie());
    ObjectNode ok = Views.JSON.createObjectNode();
    ok.put("loggedIn", true);
    json(x, 200, ok);
  }

  /** Whether the request's {@code Origin} is this console's; answers 403 when not. */
  private static boolean sameOrigin(HttpExchange x, String host) throws IOException {
    String origin = x.getRequestHeaders().getFirst("Origin");
    if (origin == null || !origin.equals("http://" + host)) {
      json(x, 403, error("refused: Origin " + origin + " is not this console's (http://" + host + ")"));
      return false;
    }
    return true;
  }

  /**
   * The request's JSON body, at most 4 KB, read within {@link ConsoleConfig#readTimeout()} ({@link ReadDeadline});
   * {@code null} once 400 is answered.
   */
  private JsonNode body(HttpExchange x, String expected) throws IOException {
    byte[] bytes;
    try (ReadDeadline deadline = new ReadDeadline(timer, config.readTimeout());
         InputStream in = x.getRequestBody()) {
      bytes = in.readNBytes(MAX_BODY + 1);
    } catch (ClosedByInterruptException e) {
      throw new IOException("the body did not arrive within " + config.readTimeout() + ": connection closed", e);
    }
    try {
      if (bytes.length > MAX_BODY) {
        json(x, 400, error("the body is over " + MAX_BODY + " bytes: " + expected));
        return null;
      }
      return Views.JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      json(x, 400, error("the body is not JSON: " + expected));
      return null;
    }
  }

  private void stream(HttpExchange x) throws IOException {
    Map<String, String> q = query(x.getRequestURI().getRawQuery());
    String page = q.getOrDefault("page", "overview");
    if (!PAGES.contains(page)) {
      json(x, 400, error("page " + page + " is not one of " + PAGES));
      return;
    }
    if (pump.clients() >= config.maxClients()) {
      json(x, 503, error("already serving " + config.maxClients() + " streams"));
      return;
    }
    StreamClient c = new StreamClient(new StreamClient.View(page, q.getOrDefault("ns", ""),
        q.getOrDefault("service", "")));
    x.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
    x.sendResponseHeaders(200, 0);
    pump.add(c);
    try (OutputStream out = x.getResponseBody()) {
      c.serve(out);
    } catch (IOException e) {
      // the browser went away
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      pump.remove(c);
    }
  }

  private void drain(HttpExchange x, String method, String host, Access.Via via) throws IOException {
    if (!config.allowDrain()) {
      json(x, 403, error("this console is read-only: start it with --allow-drain to drain instances"));
      return;
    }
    if (!method.equals("POST")) {
      json(x, 405, error("drain with POST"));
      return;
    }
    // a cookie is sent by the browser on its own: the request must come from this console's page, with its CSRF
    // token; a bearer token is shown on purpose, by a program, not by a page the user happened to visit
    if (via == Access.Via.COOKIE) {
      if (!sameOrigin(x, host)) {
        return;
      }
      if (!access.csrfMatches(x.getRequestHeaders().getFirst("X-Muster-Token"))) {
        json(x, 403, error("refused: the console's CSRF token is missing or wrong (reload the page)"));
        return;
      }
    }
    JsonNode b = body(x, "a drain names namespace, service, version and id");
    if (b == null) {
      return;
    }
    InstanceKey key;
    try {
      key = new InstanceKey(b.path("namespace").asText(), b.path("service").asText(), b.path("version").asText(),
          b.path("id").asText());
    } catch (MusterException e) {
      json(x, 400, error("a drain names namespace, service, version and id: " + e.getMessage()));
      return;
    }
    try {
      Instance now = etcd.drain(key);
      ring.add(new ConsoleEvent.Draft("operator-drain", key.namespace(), key.service(), key.version(), key.id(),
          "drained from the console: now " + now.state()));
      counters.drained();
      ObjectNode ok = Views.JSON.createObjectNode();
      ok.put("state", now.state().name());
      json(x, 200, ok);
    } catch (AccessDeniedException e) {
      json(x, 403, error(e.getMessage()));
    } catch (InvalidInputException e) {
      json(x, 409, error(e.getMessage()));
    } catch (RegistryUnavailableException e) {
      json(x, 503, error(e.getMessage()));
    } catch (MusterException e) {
      json(x, 500, error(e.getMessage()));
    }
  }

  private static void resource(HttpExchange x, String name) throws IOException {
    try (InputStream in = Routes.class.getResourceAsStream("/dev/muster/console/web/" + name)) {
      if (in == null) {
        json(x, 404, error("missing resource " + name));
        return;
      }
      byte[] body = in.readAllBytes();
      x.getResponseHeaders().set("Content-Type", TYPES.get(name.substring(name.lastIndexOf('.') + 1)));
      x.sendResponseHeaders(200, body.length);
      x.getResponseBody().write(body);
    }
  }

  private static ObjectNode error(String message) {
    ObjectNode e = Views.JSON.createObjectNode();
    e.put("error", message);
    return e;
  }

  private static void json(HttpExchange x, int status, JsonNode body) throws IOException {
    byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    x.sendResponseHeaders(status, bytes.length);
    x.getResponseBody().write(bytes);
  }

  static Map<String, String> query(String raw) {
    Map<String, String> out = new HashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      String k = eq < 0 ? pair : pair.substring(0, eq);
      String v = eq < 0 ? "" : pair.substring(eq + 1);
      out.putIfAbsent(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
    }
    return out;
  }
}
