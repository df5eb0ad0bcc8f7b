package dev.muster.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.testing.ChildProcess;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.watch.WatchEvent.EventType;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code muster register} as a real process against a real etcd: the key it writes, what SIGSTOP, SIGCONT and
 * SIGTERM do to it, and its exit codes. Every process is killed by pid when its test ends, pass or fail. Delays
 * are printed (they show up in the failsafe report) and only bounded generously.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class RegisterCommandIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final Duration EXIT = Duration.ofSeconds(30);
  private Client client;

  @BeforeEach
  void connect() {
    client = Client.builder().endpoints(etcd.endpointsString().split(",")).waitForReady(false).build();
  }

  @AfterEach
  void disconnect() {
    client.close();
  }

  @Test
  void registerPrintsRegisteredFirstAndLsShowsTheInstanceItWrote() throws Exception {
    String service = newService();
    try (ChildProcess p = register(service, "a-1", "--address", "127.0.0.1:9001", "--zone", "z1")) {
      JsonNode registered = MusterJar.awaitEvent(p, "registered");
      assertThat(p.json().eventNames().get(0)).isEqualTo("registered");
      KeyValue kv = get(key(service, "a-1")).getKvs().get(0);
      assertThat(kv.getLease()).isNotZero().isEqualTo(registered.get("lease").asLong());
      assertThat(registered.get("revision").asLong()).isEqualTo(kv.getModRevision());

      try (ChildProcess ls = MusterJar.run(EXIT, "ls", service, "--endpoints", etcd.endpointsString())) {
        assertThat(ls.exitCode().getAsInt()).as("%s", ls).isZero();
        assertThat(ls.stdout().get(0)).matches("revision \\d+, 1 instance\\(s\\)");
        assertThat(ls.stdout().get(1)).startsWith("SERVICE").contains("VERSION", "ID", "ADDRESS", "STATE");
        assertThat(ls.stdout().get(2)).contains(service, "a-1", "127.0.0.1:9001", "UP", "100", "z1");
      }
      try (ChildProcess ls = MusterJar.run(EXIT, "ls", "--json", "--endpoints", etcd.endpointsString())) {
        JsonNode line = ls.json().lines().stream().filter(n -> n.path("service").asText().equals(service)).findFirst()
            .orElseThrow(() -> new AssertionError("no line for " + service + " in " + ls));
        assertThat(line.get("event").asText()).isEqualTo("instance");
        assertThat(line.get("id").asText()).isEqualTo("a-1");
        assertThat(line.get("address").asText()).isEqualTo("127.0.0.1");
        assertThat(line.get("port").asInt()).isEqualTo(9001);
        assertThat(line.get("revision").asLong()).isGreaterThanOrEqualTo(kv.getModRevision());
      }
    }
  }

  @Test
  void theHiddenLogKeepalivesOptionPrintsEachRenewalWithEtcdsTtlAndHowLongEtcdTookToAnswer() throws Exception {
    String service = newService();
    try (ChildProcess p = register(service, "k-1", "--ttl", "5s", "--keepalive", "300ms", "--log-keepalives")) {
      long lease = MusterJar.awaitEvent(p, "registered").get("lease").asLong();
      JsonNode keepalive = MusterJar.awaitEvent(p, "keepalive");
      long answeredUs = keepalive.get("answered_us").asLong();
      assertThat(keepalive.get("lease").asLong()).isEqualTo(lease);
      assertThat(keepalive.get("ttl_s").asLong()).isBetween(1L, 5L);
      assertThat(answeredUs).as("%s", keepalive).isPositive();
      assertThat(keepalive.get("detail").asText()).as("the same keepalive's time in both")
          .isEqualTo("ttl " + keepalive.get("ttl_s").asLong() + "s; answered in " + answeredUs + " us");
    }
  }

  @Test
  void aProcessStoppedLongerThanItsTtlComesBackUnderANewLeaseWhenItResumes() throws Exception {
    String service = newService();
    String key = key(service, "b-1");
    try (ChildProcess p = register(service, "b-1", "--ttl", "2s", "--keepalive", "500ms")) {
      MusterJar.awaitEvent(p, "registered");
      long firstLease = get(key).getKvs().get(0).getLease();

      p.pause();
      await("key expired").atMost(Duration.ofSeconds(15)).pollInterval(Duration.ofMillis(50))
          .until(() -> get(key).getCount() == 0);
      long goneAt = get(key).getHeader().getRevision();
      try (KeyWatch watch = new KeyWatch(client, key, goneAt + 1)) {
        long resumed = System.nanoTime();
        Instant resumedAt = Instant.now(); // same host clock as the process's "ts"
        p.resume();
        await("key back").atMost(Duration.ofSeconds(10)).until(() -> watch.first(EventType.PUT) != null);
        KeyWatch.Seen back = watch.first(EventType.PUT);
        long millis = (back.nanos() - resumed) / 1_000_000;
        assertThat(back.lease()).isNotEqualTo(firstLease);
        assertThat(millis).isLessThan(10_000);
        MusterJar.awaitEvent(p, "reregistered");
        System.out.printf("[register IT] SIGCONT -> lease_lost: %d ms; lease_lost -> reregistered: %d ms;"
            + " SIGCONT -> key back in etcd (watch): %d ms%n",
            Duration.between(resumedAt, ts(MusterJar.awaitEvent(p, "lease_lost"))).toMillis(),
            between(p, "lease_lost", "reregistered"), millis);
      }
      assertThat(p.json().eventNames()).as("%s", p).containsSubsequence("registered", "lease_lost", "reregistered");
      assertThat(get(key).getKvs().get(0).getLease()).isNotEqualTo(firstLease);
    }
  }

  @Test
  void sigtermPublishesDrainingBeforeItRevokesTheLease() throws Exception {
    String service = newService();
    String key = key(service, "c-1");
    try (ChildProcess p = register(service, "c-1", "--drain", "1s")) {
      MusterJar.awaitEvent(p, "registered");
      long revision = get(key).getKvs().get(0).getModRevision();
      try (KeyWatch watch = new KeyWatch(client, key, revision + 1)) {
        p.terminate(); // SIGTERM
        await("key deleted").atMost(Duration.ofSeconds(15)).until(() -> watch.first(EventType.DELETE) != null);
        List<KeyWatch.Seen> seen = watch.seen();
        assertThat(seen.get(0).type()).isEqualTo(EventType.PUT);
        assertThat(seen.get(0).value()).contains("\"state\":\"DRAINING\"");
        KeyWatch.Seen delete = watch.first(EventType.DELETE);
        assertThat(seen.indexOf(delete)).isPositive();
        System.out.printf("[register IT] --drain 1s: DRAINING put -> DELETE: %d ms%n",
            (delete.nanos() - seen.get(0).nanos()) / 1_000_000);
      }
      assertThat(p.exitCode(Duration.ofSeconds(15))).isIn(0, 143);
      assertThat(p.json().eventNames()).as("%s", p).containsSubsequence("registered", "draining", "revoked");
      assertThat(p.json().otherLines()).as("stdout is JSON lines only").isEmpty();
    }
  }

  @Test
  void sigtermWithoutADrainPeriodDeletesTheKeyAtOnce() throws Exception {
    String service = newService();
    String key = key(service, "c-2");
    try (ChildProcess p = register(service, "c-2", "--drain", "0s")) {
      MusterJar.awaitEvent(p, "registered");
      long revision = get(key).getKvs().get(0).getModRevision();
      try (KeyWatch watch = new KeyWatch(client, key, revision + 1)) {
        long signalled = System.nanoTime();
        p.terminate();
        await("key deleted").atMost(Duration.ofSeconds(15)).until(() -> watch.first(EventType.DELETE) != null);
        long millis = (watch.first(EventType.DELETE).nanos() - signalled) / 1_000_000;
        System.out.printf("[register IT] --drain 0s: SIGTERM -> DELETE seen by a watch: %d ms%n", millis);
        assertThat(millis).isLessThan(5_000);
      }
      assertThat(p.exitCode(Duration.ofSeconds(15))).isIn(0, 143);
      assertThat(p.json().eventNames()).as("%s", p).containsSubsequence("draining", "revoked");
    }
  }

  @Test
  void theSameIdRegisteredTwiceExitsThreeAndLeavesTheFirstRegistrationAlone() throws Exception {
    String service = newService();
    String key = key(service, "d-1");
    try (ChildProcess first = register(service, "d-1")) {
      MusterJar.awaitEvent(first, "registered");
      KeyValue before = get(key).getKvs().get(0);
      try (ChildProcess second = register(service, "d-1")) {
        assertThat(second.exitCode(EXIT)).as("%s", second).isEqualTo(3);
        assertThat(second.stderr()).hasSize(1);
        assertThat(second.stderr().get(0)).startsWith("muster: ").contains(key)
            .contains(Long.toHexString(before.getLease()));
        assertThat(second.json().eventNames()).isEmpty();
      }
      KeyValue after = get(key).getKvs().get(0);
      assertThat(after.getLease()).isEqualTo(before.getLease());
      assertThat(after.getModRevision()).isEqualTo(before.getModRevision());
      assertThat(client.getLeaseClient().timeToLive(before.getLease(), LeaseOption.DEFAULT)
          .get(10, TimeUnit.SECONDS).getTTL()).isPositive();
    }
  }

  @Test
  void anUnreachableRegistryExitsFourAfterTheStartTimeoutWithOneLine() throws Exception {
    long started = System.nanoTime();
    try (ChildProcess p = MusterJar.run(Duration.ofSeconds(20), "register", "--endpoints", "http://127.0.0.1:1",
        "--start-timeout", "1s", "--service", newService(), "--address", "127.0.0.1:9005")) {
      assertThat(p.exitCode().getAsInt()).as("%s", p).isEqualTo(4);
      assertThat(p.stderr()).hasSize(1);
      assertThat(p.stderr().get(0)).startsWith("muster: ").contains("http://127.0.0.1:1").contains("--endpoints");
      assertThat(p.stdout()).isEmpty();
      System.out.printf("[register IT] unreachable etcd, --start-timeout 1s: exit 4 after %d ms%n",
          (System.nanoTime() - started) / 1_000_000);
    }
  }

  @Test
  void readyUrlRegistersStartingAndPutsUpAtItsFirst2xx() throws Exception {
    String service = newService();
    java.util.concurrent.atomic.AtomicBoolean warm = new java.util.concurrent.atomic.AtomicBoolean();
    com.sun.net.httpserver.HttpServer ready = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    ready.createContext("/ready", exchange -> {
      exchange.sendResponseHeaders(warm.get() ? 200 : 503, -1);
      exchange.close();
    });
    ready.start();
    try (ChildProcess p = register(service, "r-1", "--ready-url",
        "http://127.0.0.1:" + ready.getAddress().getPort() + "/ready")) {
      MusterJar.awaitEvent(p, "registered");
      assertThat(state(service, "r-1")).isEqualTo("STARTING");
      Thread.sleep(1000); // five polls answered 503: still STARTING
      assertThat(state(service, "r-1")).isEqualTo("STARTING");
      assertThat(p.json().eventNames()).doesNotContain("ready");

      Instant warmedAt = Instant.now();
      warm.set(true);
      JsonNode readyLine = MusterJar.awaitEvent(p, "ready");
      // The put follows the first 200, which only comes after warm was set (after_ms counts from the poller's
      // own start, a little before this test's sleep began, so it is not compared with the sleep).
      assertThat(ts(readyLine)).isAfter(warmedAt);
      assertThat(readyLine.get("after_ms").asLong()).isPositive();
      assertThat(state(service, "r-1")).isEqualTo("UP");
    } finally {
      ready.stop(0);
    }
  }

  @Test
  void startNotReadyTurnsUpOnSigusr1AndBackToStartingOnSigusr2OnTheSameLease() throws Exception {
    String service = newService();
    try (ChildProcess p = register(service, "s-1", "--start-not-ready")) {
      MusterJar.awaitEvent(p, "registered");
      assertThat(state(service, "s-1")).isEqualTo("STARTING");
      long lease = get(key(service, "s-1")).getKvs().get(0).getLease();
      p.signal("USR1");
      assertThat(MusterJar.awaitEvent(p, "ready").path("by").asText()).isEqualTo("SIGUSR1");
      assertThat(state(service, "s-1")).isEqualTo("UP");
      p.signal("USR2");
      assertThat(MusterJar.awaitEvent(p, "not_ready").path("by").asText()).isEqualTo("SIGUSR2");
      assertThat(state(service, "s-1")).isEqualTo("STARTING");
      assertThat(get(key(service, "s-1")).getKvs().get(0).getLease()).as("the same lease").isEqualTo(lease);
    }
  }

  @Test
  void aReadyUrlThatIsNotHttpIsOneLineAndExitTwo() throws Exception {
    try (ChildProcess p = MusterJar.run(EXIT, "register", "--endpoints", etcd.endpointsString(), "--service",
        newService(), "--address", "127.0.0.1:9000", "--ready-url", "ftp://127.0.0.1/ready")) {
      assertThat(p.exitCode().getAsInt()).isEqualTo(2);
      assertThat(String.join("\n", p.stderr()).strip()).startsWith("muster: --ready-url is ftp://127.0.0.1/ready")
          .doesNotContain("\n");
    }
  }

  /** The state field of the record in etcd. */
  private String state(String service, String id) throws Exception {
    KeyValue kv = get(key(service, id)).getKvs().get(0);
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(kv.getValue().getBytes()).path("state")
        .asText("UP");
  }

  private ChildProcess register(String service, String id, String... extra) {
    List<String> args = new java.util.ArrayList<>(List.of("register", "--endpoints", etcd.endpointsString(),
        "--service", service, "--id", id));
    if (!List.of(extra).contains("--address")) {
      args.addAll(List.of("--address", "127.0.0.1:9000"));
    }
    args.addAll(List.of(extra));
    return MusterJar.start(args.toArray(String[]::new));
  }


  /** Milliseconds between the first {@code from} and the first {@code to} event, by their {@code ts}. */
  private static long between(ChildProcess p, String from, String to) {
    return Duration.between(ts(MusterJar.awaitEvent(p, from)), ts(MusterJar.awaitEvent(p, to))).toMillis();
  }

  private static Instant ts(JsonNode event) {
    return Instant.parse(event.get("ts").asText());
  }

  private GetResponse get(String key) throws Exception {
    return client.getKVClient().get(KeyWatch.bytes(key)).get(10, TimeUnit.SECONDS);
  }

  private static String newService() {
    return "it-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static String key(String service, String id) {
    return "/muster/default/" + service + "/v1/" + id;
  }
}
