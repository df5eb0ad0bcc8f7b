package dev.muster.lab.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabContext;
import dev.muster.lab.LabException;
import dev.muster.lab.Scenario;
import dev.muster.lab.ScenarioResult;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.RecordSignature;
import dev.muster.sign.SigningKey;
import dev.muster.sign.TrustedKey;
import dev.muster.testing.ChildProcess;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.PutOption;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A user with write access to etcd puts forged records under a signed provider's service prefix, pointing callers at
 * an address he controls. Consumer T trusts the provider's key ({@code muster call --trust-key p1.pub}) and excludes
 * every forgery (counting them); consumer N does not check and calls the forger.
 *
 * <p>How: {@code muster keygen} makes p1's key; p1 registers with {@code --sign-key}; T and N (B-style: no
 * ejection, no retry) call /hello every call interval until warm. The lab then grants its own lease and, with a
 * plain jetcd client, puts three records: {@code forged-unsigned} (no signature), {@code forged-claims-p1} (signed
 * by the forger's key, naming p1's key id) — both pointing at an HTTP server in the lab's process that answers
 * {@code forged} — and {@code replayed}, p1's own signed value copied to another key on the forger's lease. From the
 * consumers' logs: each one's last set and unverified count, and which instances its calls reached after the
 * forgery.
 */
public final class ForgedRegistration implements Scenario {
  private static final List<String> FORGED = List.of("forged-claims-p1", "forged-unsigned", "replayed");
  private static final Duration OBSERVE = Duration.ofSeconds(3);

  @Override
  public String name() {
    return "forged_registration";
  }

  @Override
  public String shows() {
    return "forged records under a signed provider's prefix: T (--trust-key) excludes and counts them, N serves them";
  }

  @Override
  public String seed() {
    return "issue 13: a forged record is excluded by a consumer that trusts A's key, served by one that does not check";
  }

  @Override
  public ScenarioResult run(LabContext ctx) throws Exception {
    String endpoints = ctx.etcd(1).endpointsString();
    String key = keygen(ctx, "p1");
    Fleet f = Fleet.providers(ctx, "hello", endpoints, 1, "--sign-key", key + ".key");
    ChildProcess t = ctx.consumer("consumer-t", f.service, endpoints, false, "--trust-key", key + ".pub");
    ChildProcess n = ctx.consumer("consumer-n", f.service, endpoints, false);
    f.awaitWarm(ctx, t, n);

    AtomicLong forgerHits = new AtomicLong();
    HttpServer forger = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    forger.createContext("/hello", exchange -> {
      forgerHits.incrementAndGet();
      byte[] body = "forged\n".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    forger.start();
    try (Client client = Client.builder().endpoints(endpoints.split(",")).build()) {
      String p1KeyId = TrustedKey.read(Path.of(key + ".pub")).keyId();
      long lease = client.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID(); // the forger's own
      Instant forged = Instant.now(); // before the puts: a consumer may print them before forge() returns
      long last = forge(client, lease, f.service, forger.getAddress().getPort(), p1KeyId);
      ctx.mark("forge", String.join(", ", FORGED) + " put on the lab's own lease, the last at revision " + last);
      ctx.await("N serves the forged records", Duration.ofSeconds(30),
          () -> Fleet.lastSet(n).containsAll(FORGED));
      Instant nServes = FORGED.stream().map(id -> Fleet.presentAt(n, id, forged).orElseThrow()).max(
          Instant::compareTo).orElseThrow();
      ctx.await("T has taken the forged revision", Duration.ofSeconds(30),
          () -> lastSetLine(t).path("revision").asLong() >= last);
      Instant from = Instant.now();
      ctx.sleep(OBSERVE);
      Instant to = Instant.now();

      List<JsonNode> tCalls = Fleet.calls(t, from, to);
      List<JsonNode> nCalls = Fleet.calls(n, from, to);
      long tToForged = FORGED.stream().mapToLong(id -> Fleet.attemptsTo(tCalls, id)).sum();
      long nToForger = Fleet.attemptsTo(nCalls, "forged-claims-p1") + Fleet.attemptsTo(nCalls, "forged-unsigned");
      List<String> tSet = new TreeSet<>(Fleet.lastSet(t)).stream().toList();
      List<String> nSet = new TreeSet<>(Fleet.lastSet(n)).stream().toList();
      long unverified = lastSetLine(t).path("unverified").asLong();
      long tFailed = Fleet.failed(tCalls);
      ctx.note(String.format("forger's server answered %d requests", forgerHits.get()));

      boolean pass = tSet.equals(List.of("p1")) && unverified >= FORGED.size() && tToForged == 0 && tFailed == 0
          && !tCalls.isEmpty() && nSet.containsAll(FORGED) && nToForger > 0 && forgerHits.get() > 0;
      return ScenarioResult.of(this, pass, String.format("T serves %s, %d unverified excluded, %d of %d calls to a"
              + " forged record, %d failed; N serves %s (all %d forgeries %d ms after the first put), %d of %d"
              + " calls answered by the forger",
          tSet, unverified, tToForged, tCalls.size(), tFailed, nSet, FORGED.size(), Fleet.millis(forged, nServes),
          nToForger, nCalls.size()),
          "T (trusts p1's key) serves only p1, counts the " + FORGED.size() + " forgeries and never calls them; N"
              + " (no check) serves them and calls the forger");
    } finally {
      forger.stop(0);
    }
  }

  /** {@code muster keygen --out DIR/NAME}, as a user would make the key pair; returns {@code DIR/NAME}. */
  static String keygen(LabContext ctx, String name) {
    String key = ctx.dir().resolve(name).toString();
    ChildProcess keygen = ctx.start("keygen", "keygen", "--out", key);
    if (keygen.exitCode(Duration.ofSeconds(60)) != 0) {
      throw new LabException("muster keygen failed: " + keygen.stderrTail());
    }
    return key;
  }

  /** Puts the three forged records (see the class comment) on {@code lease}; returns the last revision. */
  private static long forge(Client client, long lease, String service, int forgerPort, String p1KeyId)
      throws Exception {
    RegistryLayout layout = RegistryLayout.defaults();
    Instance evil = Instance.of(service, "127.0.0.1", forgerPort);
    put(client, layout.instanceKey(evil.id("forged-unsigned")), InstanceCodec.encode(evil.id("forged-unsigned")),
        lease);
    String claims = layout.instanceKey(evil.id("forged-claims-p1"));
    ObjectMapper json = new ObjectMapper();
    ObjectNode value = (ObjectNode) json.readTree(InstanceCodec.encodeSigned(evil.id("forged-claims-p1"), claims,
        lease, 1, java.time.Instant.now().plusSeconds(600), SigningKey.generate(), false));
    ((ObjectNode) value.get(RecordSignature.MEMBER)).put("kid", p1KeyId);
    put(client, claims, json.writeValueAsBytes(value), lease);
    String p1 = layout.instanceKey(evil.id("p1"));
    byte[] p1Value = client.getKVClient().get(bytes(p1)).get(10, TimeUnit.SECONDS).getKvs().stream().findFirst()
        .orElseThrow(() -> new LabException("p1's record is not in etcd")).getValue().getBytes();
    return put(client, layout.instanceKey(evil.id("replayed")), p1Value, lease);
  }

  static long put(Client client, String key, byte[] value, long lease) throws Exception {
    return client.getKVClient().put(bytes(key), ByteSequence.from(value),
        PutOption.builder().withLeaseId(lease).build()).get(10, TimeUnit.SECONDS).getHeader().getRevision();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The consumer's last line with a set (its {@code --json} cache lines carry the unverified count). */
  static JsonNode lastSetLine(ChildProcess consumer) {
    List<JsonNode> lines = consumer.json().lines().stream().filter(l -> l.has("instances")).toList();
    return lines.isEmpty() ? new ObjectMapper().createObjectNode() : lines.get(lines.size() - 1);
  }
}
