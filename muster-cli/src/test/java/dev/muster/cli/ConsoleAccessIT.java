package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.console.ConsoleConfig;
import dev.muster.console.ConsoleServer;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdMaintenance;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdCluster;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The console as an attacker reaches it, over raw HTTP on real sockets ({@link Socket}: {@code Host} is whatever
 * the test writes), a {@link ConsoleServer} in this JVM on a real etcd: a request without the token, with a wrong
 * one, from another page's {@code Origin}, under another {@code Host} (DNS rebinding, wildcard bind too), a body sent
 * a byte a second, a full queue. Each is refused with its status; the same requests with the token are served.
 * The browser's side (the login through the printed URL, a drain with the session) is {@link ConsoleIT}'s.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ConsoleAccessIT {
  static {
    // The JDK's own deadline on a request (sun.net.httpserver.maxReqTime, read once per JVM; a console sets it to
    // its readTimeout when unset): set far beyond this class's tests, so that the full queue's held connections stay
    // held while the test looks, and so that what cuts the slow body off is the console's own deadline.
    if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
      System.setProperty("sun.net.httpserver.maxReqTime", "600");
    }
  }

  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final String TOKEN = "test-token-0123456789abcdef";
  private static EtcdRegistry registry;
  private static EtcdMaintenance maintenance;
  private static Registration shop;

  @BeforeAll
  static void connect() {
    registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    maintenance = EtcdMaintenance.connect(registry.config());
    shop = registry.register(Instance.of("shop", "127.0.0.1", 7401).id("s1"),
        RegistrarConfig.builder().drain(Duration.ZERO).build());
  }

  @AfterAll
  static void close() {
    if (shop != null) {
      shop.close();
    }
    if (maintenance != null) {
      maintenance.close();
    }
    if (registry != null) {
      registry.close();
    }
  }

  @Test
  void theApiNeedsTheTokenAndTheStaticPageDoesNot() throws IOException {
    try (ConsoleServer console = start(config().allowDrain(true))) {
      int port = console.address().getPort();
      assertThat(get(port, "/", Map.of()).status()).as("the page holds no data").isEqualTo(200);
      for (String path : List.of("/api/session", "/api/stream?page=overview")) {
        Answer none = get(port, path, Map.of());
        assertThat(none.status()).as("no token: %s", path).isEqualTo(401);
        assertThat(none.body()).contains("log in first");
        assertThat(get(port, path, Map.of("Authorization", "Bearer wrong-token-0123456789")).status())
            .as("wrong token: %s", path).isEqualTo(401);
        assertThat(get(port, path, Map.of("Cookie", "muster-console-" + port + "=made-up")).status())
            .as("made-up session: %s", path).isEqualTo(401);
      }
      Answer session = get(port, "/api/session", Map.of("Authorization", "Bearer " + TOKEN));
      assertThat(session.status()).isEqualTo(200);
      assertThat(session.body()).contains("\"allowDrain\":true", "\"token\":");
    }
  }

  @Test
  void aLoginTradesTheTokenForAnHttpOnlySessionCookieOnlyFromTheConsolesOwnPage() throws IOException {
    try (ConsoleServer console = start(config().allowDrain(true))) {
      int port = console.address().getPort();
      String origin = "http://127.0.0.1:" + port;
      String right = "{\"token\":\"" + TOKEN + "\"}";
      assertThat(post(port, "/api/login", Map.of("Origin", origin), "{\"token\":\"wrong-token-0123456789\"}")
          .status()).as("wrong token").isEqualTo(401);
      assertThat(post(port, "/api/login", Map.of("Origin", origin), "{}").status()).as("no token").isEqualTo(401);
      assertThat(post(port, "/api/login", Map.of("Origin", "http://evil.example"), right).status())
          .as("another page's Origin").isEqualTo(403);
      assertThat(post(port, "/api/login", Map.of(), right).status()).as("no Origin").isEqualTo(403);

      Answer login = post(port, "/api/login", Map.of("Origin", origin), right);
      assertThat(login.status()).isEqualTo(200);
      String cookie = login.header("Set-Cookie");
      assertThat(cookie).startsWith("muster-console-" + port + "=").contains("HttpOnly", "SameSite=Strict")
          .doesNotContain(TOKEN);
      String session = cookie.substring(0, cookie.indexOf(';'));
      Answer s = get(port, "/api/session", Map.of("Cookie", session));
      assertThat(s.status()).isEqualTo(200);
      assertThat(s.body()).contains("\"token\":");
    }
  }

  @Test
  void aDrainWithTheSessionNeedsTheConsolesOriginAndItsCsrfToken() throws IOException {
    try (ConsoleServer console = start(config().allowDrain(true))) {
      int port = console.address().getPort();
      String origin = "http://127.0.0.1:" + port;
      String cookie = post(port, "/api/login", Map.of("Origin", origin), "{\"token\":\"" + TOKEN + "\"}")
          .header("Set-Cookie");
      String session = cookie.substring(0, cookie.indexOf(';'));
      Matcher m = Pattern.compile("\"token\":\"([^\"]+)\"").matcher(get(port, "/api/session",
          Map.of("Cookie", session)).body());
      assertThat(m.find()).isTrue();
      String csrf = m.group(1);
      String drain = "{\"namespace\":\"default\",\"service\":\"shop\",\"version\":\"v1\",\"id\":\"s1\"}";

      assertThat(post(port, "/api/drain", Map.of("Origin", origin, "X-Muster-Token", csrf), drain).status())
          .as("no session").isEqualTo(401);
      assertThat(post(port, "/api/drain", Map.of("Cookie", session, "Origin", "http://evil.example",
          "X-Muster-Token", csrf), drain).status()).as("bad Origin").isEqualTo(403);
      assertThat(post(port, "/api/drain", Map.of("Cookie", session, "Origin", origin), drain).status())
          .as("no CSRF token").isEqualTo(403);
      assertThat(post(port, "/api/drain", Map.of("Cookie", session, "Origin", origin,
          "X-Muster-Token", "wrong"), drain).status()).as("wrong CSRF token").isEqualTo(403);

      Answer done = post(port, "/api/drain", Map.of("Cookie", session, "Origin", origin, "X-Muster-Token", csrf),
          drain);
      assertThat(done.status()).as("%s", done.body()).isEqualTo(200);
      assertThat(done.body()).contains("DRAINING");
    }
  }

  @Test
  void anotherHostIsRefusedOnAWildcardBindToo() throws Exception {
    try (ConsoleServer wildcard = start(config().listen(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0))
        .allowedHosts(List.of("console.example")));
         ConsoleServer loopback = start(config())) {
      int port = wildcard.address().getPort();
      Map<String, String> bearer = Map.of("Authorization", "Bearer " + TOKEN);
      // DNS rebinding: the attacker's name now points at this machine; the browser sends the attacker's Host
      Answer rebound = get(port, "/api/session", with(bearer, "Host", "rebind.attacker.example:" + port));
      assertThat(rebound.status()).isEqualTo(421);
      assertThat(rebound.body()).contains("--allowed-host").doesNotContain("\"token\"");
      assertThat(get(port, "/", Map.of("Host", "rebind.attacker.example:" + port)).status()).isEqualTo(421);
      assertThat(get(port, "/api/session", with(bearer, "Host", "console.example:" + (port + 1))).status())
          .as("an allowed name on another port").isEqualTo(421);
      assertThat(get(port, "/api/session", with(bearer, "Host", "Console.Example:" + port)).status())
          .as("--allowed-host").isEqualTo(200);
      assertThat(get(port, "/api/session", with(bearer, "Host", "localhost:" + port)).status()).isEqualTo(200);
      assertThat(get(port, "/api/session", bearer).status()).as("127.0.0.1").isEqualTo(200);

      int lo = loopback.address().getPort();
      assertThat(get(lo, "/api/session", with(bearer, "Host", "rebind.attacker.example:" + lo)).status())
          .isEqualTo(421);
      assertThat(get(lo, "/api/session", with(bearer, "Host", "console.example:" + lo)).status())
          .as("allowed only where given").isEqualTo(421);
    }
  }

  @Test
  void aBodySentAByteASecondIsCutOffAndNotServed() throws Exception {
    try (ConsoleServer console = start(config().readTimeout(Duration.ofSeconds(1)));
         Socket s = new Socket("127.0.0.1", console.address().getPort())) {
      int port = console.address().getPort();
      byte[] body = ("{\"token\":\"" + TOKEN + "\"}").getBytes(StandardCharsets.UTF_8);
      OutputStream out = s.getOutputStream();
      out.write(("POST /api/login HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nOrigin: http://127.0.0.1:" + port
          + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      AtomicInteger sent = new AtomicInteger();
      Thread slow = new Thread(() -> {
        try {
          for (byte b : body) {
            out.write(b);
            out.flush();
            sent.incrementAndGet();
            Thread.sleep(1000);
          }
        } catch (IOException | InterruptedException e) {
          // cut off: what the test waits for
        }
      }, "slow-body");
      slow.setDaemon(true);
      slow.start();
      byte[] answer;
      try {
        answer = s.getInputStream().readAllBytes(); // until the console closes the connection
      } catch (IOException reset) {
        answer = new byte[0];
      }
      slow.interrupt();
      assertThat(new String(answer, StandardCharsets.UTF_8)).as("no answer, no session").doesNotContain("200 OK")
          .doesNotContain("Set-Cookie");
      assertThat(sent.get()).as("cut off before the body was whole").isLessThan(body.length);
    }
  }

  @Test
  void aFullQueueIsAnswered503AndTheConsoleServesAgainOnceItDrains() throws Exception {
    try (ConsoleServer console = start(config().maxClients(1))) {
      int port = console.address().getPort();
      List<Socket> held = new ArrayList<>();
      try {
        // connections whose request never ends hold the HTTP threads, then fill the queue behind them
        int threads = 1 + 8;
        for (int i = 0; i < threads + 64; i++) {
          Socket s = new Socket("127.0.0.1", port);
          held.add(s);
          s.getOutputStream().write("GET /api/session HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
        }
        await("503 once the queue is full").atMost(Duration.ofSeconds(30)).until(() -> {
          Socket probe = new Socket("127.0.0.1", port);
          held.add(probe); // a probe still waiting in the queue holds its place there too
          probe.setSoTimeout(500);
          probe.getOutputStream().write(request("GET", "/", Map.of("Host", "127.0.0.1:" + port), null));
          try {
            Answer a = Answer.read(probe.getInputStream());
            return a.status() == 503 && a.body().contains("busy");
          } catch (SocketTimeoutException queued) {
            return false;
          }
        });
      } finally {
        for (Socket s : held) {
          s.close();
        }
      }
      await("served again").atMost(Duration.ofSeconds(30))
          .until(() -> get(port, "/api/session", Map.of("Authorization", "Bearer " + TOKEN)).status() == 200);
    }
  }

  private static ConsoleConfig.Builder config() {
    return ConsoleConfig.builder().listen(new InetSocketAddress("127.0.0.1", 0)).token(TOKEN);
  }

  private static ConsoleServer start(ConsoleConfig.Builder config) {
    return ConsoleServer.start(registry, maintenance, config.build());
  }

  private static Map<String, String> with(Map<String, String> headers, String name, String value) {
    Map<String, String> out = new LinkedHashMap<>(headers);
    out.put(name, value);
    return out;
  }

  private static Answer get(int port, String path, Map<String, String> headers) throws IOException {
    return exchange(port, "GET", path, headers, null);
  }

  private static Answer post(int port, String path, Map<String, String> headers, String body) throws IOException {
    return exchange(port, "POST", path, with(headers, "Content-Type", "application/json"), body);
  }

  /** One request on its own connection; {@code Host} is 127.0.0.1:PORT unless given. */
  private static Answer exchange(int port, String method, String path, Map<String, String> headers, String body)
      throws IOException {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("Host", "127.0.0.1:" + port);
    all.putAll(headers);
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream().write(request(method, path, all, body));
      s.getOutputStream().flush();
      return Answer.read(s.getInputStream());
    }
  }

  private static byte[] request(String method, String path, Map<String, String> headers, String body) {
    StringBuilder r = new StringBuilder(method).append(' ').append(path).append(" HTTP/1.1\r\n");
    headers.forEach((k, v) -> r.append(k).append(": ").append(v).append("\r\n"));
    byte[] b = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    if (body != null) {
      r.append("Content-Length: ").append(b.length).append("\r\n");
    }
    r.append("Connection: close\r\n\r\n");
    byte[] head = r.toString().getBytes(StandardCharsets.UTF_8);
    byte[] out = new byte[head.length + b.length];
    System.arraycopy(head, 0, out, 0, head.length);
    System.arraycopy(b, 0, out, head.length, b.length);
    return out;
  }

  /** A status, headers (first value by lower-case name) and body, read until the console closes. */
  record Answer(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(java.util.Locale.ROOT));
    }

    static Answer read(InputStream in) throws IOException {
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      byte[] buf = new byte[8192];
      for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
        all.write(buf, 0, n);
      }
      String text = all.toString(StandardCharsets.UTF_8);
      int end = text.indexOf("\r\n\r\n");
      String[] lines = (end < 0 ? text : text.substring(0, end)).split("\r\n");
      Map<String, String> headers = new LinkedHashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.putIfAbsent(lines[i].substring(0, colon).toLowerCase(java.util.Locale.ROOT),
              lines[i].substring(colon + 1).strip());
        }
      }
      int status = lines[0].startsWith("HTTP/1.1 ") ? Integer.parseInt(lines[0].substring(9, 12)) : -1;
      return new Answer(status, headers, end < 0 ? "" : text.substring(end + 4));
    }
  }
}
