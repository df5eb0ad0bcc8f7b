package dev.muster.console.internal;

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
import dev.muster.registry.RegistryLayout;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The console's HTTP surface: three static files from the jar, {@code /api/session} (whether drain is allowed, and
 * the CSRF token when it is), {@code /api/stream} (one SSE stream per page) and {@code POST /api/drain}.
 *
 * <p>Every answer carries {@code Content-Security-Policy: default-src 'self'} and {@code nosniff}. A request whose
 * {@code Host} is not the console's own address is refused (a DNS-rebinding page cannot read the console); a drain
 * needs the per-process token and an {@code Origin} equal to the console's. Handlers run on the HTTP pool's threads;
 * a stream holds its thread while it is open; this class keeps no mutable state.
 */
final class Routes {
  private static final Map<String, String> STATIC = Map.of(
      "/", "index.html", "/index.html", "index.html", "/console.css", "console.css", "/console.js", "console.js");
  private static final Map<String, String> TYPES = Map.of(
      "html", "text/html; charset=utf-8", "css", "text/css; charset=utf-8", "js", "text/javascript; charset=utf-8");
  private static final Set<String> PAGES = Set.of("overview", "service", "events", "cluster");

  private final Pump pump;
  private final EventRing ring;
  private final EtcdMaintenance etcd;
  private final RegistryLayout layout;
  private final ConsoleConfig config;
  private final Set<String> hosts;
  private final String token;
  private final ConsoleCounters counters;

  Routes(Pump pump, EventRing ring, EtcdMaintenance etcd, RegistryLayout layout, ConsoleConfig config,
      InetSocketAddress bound, ConsoleCounters counters) {
    this.pump = pump;
    this.counters = counters;
    this.ring = ring;
    this.etcd = etcd;
    this.layout = layout;
    this.config = config;
    this.hosts = allowedHosts(bound);
    byte[] random = new byte[24];
    new SecureRandom().nextBytes(random);
    this.token = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
  }

  /** {@code host:port} values a browser sends for the bound address; any host when bound to the wildcard. */
  static Set<String> allowedHosts(InetSocketAddress bound) {
    int port = bound.getPort();
    if (bound.getAddress().isAnyLocalAddress()) {
      return Set.of();
    }
    String ip = bound.getAddress().getHostAddress();
    String literal = ip.indexOf(':') >= 0 ? "[" + ip + "]" : ip;
    if (bound.getAddress().isLoopbackAddress()) {
      return Set.copyOf(List.of(literal + ":" + port, "localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port));
    }
    return Set.of(literal + ":" + port);
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
    String host = x.getRequestHeaders().getFirst("Host");
    if (!hosts.isEmpty() && (host == null || !hosts.contains(host))) {
      json(x, 421, error("this console answers only to " + hosts + ", not Host " + host));
      return;
    }
    String path = x.getRequestURI().getPath();
    String method = x.getRequestMethod();
    if (path.equals("/api/drain")) {
      drain(x, method, host);
    } else if (!method.equals("GET")) {
      json(x, 405, error(method + " is not served here"));
    } else if (STATIC.containsKey(path)) {
      resource(x, STATIC.get(path));
    } else if (path.equals("/api/session")) {
      ObjectNode s = Views.JSON.createObjectNode();
      s.put("allowDrain", config.allowDrain());
      if (config.allowDrain()) {
        s.put("token", token);
      }
      json(x, 200, s);
    } else if (path.equals("/api/stream")) {
      stream(x);
    } else {
      json(x, 404, error("no such page: " + path));
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

  private void drain(HttpExchange x, String method, String host) throws IOException {
    if (!config.allowDrain()) {
      json(x, 403, error("this console is read-only: start it with --allow-drain to drain instances"));
      return;
    }
    if (!method.equals("POST")) {
      json(x, 405, error("drain with POST"));
      return;
    }
    String origin = x.getRequestHeaders().getFirst("Origin");
    if (origin == null || !origin.equals("http://" + host)) {
      json(x, 403, error("refused: Origin " + origin + " is not this console's (http://" + host + ")"));
      return;
    }
    String sent = x.getRequestHeaders().getFirst("X-Muster-Token");
    if (sent == null || !MessageDigest.isEqual(sent.getBytes(StandardCharsets.UTF_8),
        token.getBytes(StandardCharsets.UTF_8))) {
      json(x, 403, error("refused: the console's token is missing or wrong (reload the page)"));
      return;
    }
    InstanceKey key;
    try (InputStream in = x.getRequestBody()) {
      JsonNode b = Views.JSON.readTree(in.readNBytes(4096));
      key = new InstanceKey(b.path("namespace").asText(), b.path("service").asText(), b.path("version").asText(),
          b.path("id").asText());
    } catch (IOException | MusterException e) {
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
