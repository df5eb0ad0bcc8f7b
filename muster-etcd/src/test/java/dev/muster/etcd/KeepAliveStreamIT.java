package dev.muster.etcd;

import static dev.muster.registry.RegistrationEvent.Type.FAILED;
import static dev.muster.registry.RegistrationEvent.Type.KEEPALIVE;
import static dev.muster.registry.RegistrationEvent.Type.LEASE_LOST;
import static dev.muster.registry.RegistrationEvent.Type.RECONNECTED;
import static dev.muster.registry.RegistrationEvent.Type.REREGISTERED;
import static dev.muster.registry.RegistrationEvent.Type.UNREACHABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.etcd.internal.NegativeControls;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.registry.internal.RegistrarControls;
import dev.muster.testing.EtcdCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A registry's registrations keep their leases alive on one {@code LeaseKeepAlive} stream per client, written by
 * Muster (docs/design-registrations.md, section 3): etcd receives each keepalive once, where jetcd's
 * {@code keepAliveOnce} sent it twice; an etcd crash fails the keepalives on the stream, and the stream opened on the
 * next client keeps every lease; with auth the stream carries jetcd's token, keeps it alive where etcd checks it, and
 * gets a new one when etcd lets it expire.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class KeepAliveStreamIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();
  /** With auth, and tokens that expire after 2 s unused. */
  @RegisterExtension
  static EtcdCluster secured = EtcdCluster.builder().members(1).auth().authTokenTtl(Duration.ofSeconds(2)).build();

  private static final int REGISTRATIONS = 200;
  private static final Pattern RECEIVED = Pattern.compile(
      "grpc_server_msg_received_total\\{grpc_method=\"LeaseKeepAlive\"[^}]*} (\\S+)");
  private static final Pattern AUTHENTICATE = Pattern.compile(
      "grpc_server_started_total\\{grpc_method=\"Authenticate\"[^}]*} (\\S+)");
  private static final AtomicInteger USERS = new AtomicInteger();

  /** startTimeout 30 s: 200 registrations start on two shared cores, beside other test JVMs. */
  private static RegistrarConfig config(Duration ttl, Duration keepalive) {
    return RegistrarConfig.builder().ttl(ttl).keepaliveInterval(keepalive).startTimeout(Duration.ofSeconds(30))
        .drain(Duration.ZERO).shutdownHook(false).build();
  }

  @Test
  void twoHundredRegistrationsShareOneStreamAndEtcdReceivesEachKeepaliveOnce() throws Exception {
    double receivedBefore = received(etcd.member(0).clientUrl());
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    Map<String, Long> stats;
    try {
      String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
      for (int i = 0; i < REGISTRATIONS; i++) {
        registry.register(Instance.of(service, "10.0.0.7", 8000 + i),
            config(Duration.ofSeconds(10), Duration.ofSeconds(1)));
      }
      // Five keepalives per registration on average: enough that a stray message would show.
      await().atMost(Duration.ofSeconds(60)).until(() -> registry.connectionStats().get("keepalive.answered")
          >= 5L * REGISTRATIONS);
    } finally {
      closeLeavingUnansweredRevokes(registry); // no drain: each lease is revoked, and no keepalive is sent after it
      stats = registry.connectionStats();
    }
    long sent = stats.get("keepalive.sent");
    // etcd counts a message when its handler reads it; wait until the count stops moving.
    double[] received = {Double.NaN};
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(300)).until(() -> {
      double now = received(etcd.member(0).clientUrl()) - receivedBefore;
      boolean settled = now == received[0];
      received[0] = now;
      return settled;
    });
    System.out.printf("%d registrations: %d keepalives sent, %d answered, etcd received %.0f LeaseKeepAlive"
        + " messages; connection %s%n", REGISTRATIONS, sent, stats.get("keepalive.answered"), received[0], stats);

    // At most one stream per client: a fresh-clone suite run (bb40975, beside muster-cli's ITs) saw etcd answer
    // nobody for seconds while the first registrations started, and the connection replaced its 4 s old client as
    // SUSPECT, as designed (docs/design-storms.md); the new client's keepalives went on its own one stream. A client
    // replaced before its first keepalive opens none (another run, of f4fc5b6: the client was replaced while the
    // first leases were granted, so 2 clients and 1 stream).
    long clients = 1 + stats.get("replaced.suspect") + stats.get("replaced.accepts_again");
    assertThat(stats.get("keepalive.streams")).as("at most one stream per client carried every registration's"
        + " keepalives (%d clients)", clients).isBetween(1L, clients);
    assertThat(stats.get("keepalive.answered")).isGreaterThanOrEqualTo(5L * REGISTRATIONS);
    // Exactly one message per keepalive, but for the few the close may cut on the wire.
    assertThat(received[0]).as("etcd's LeaseKeepAlive messages for %d keepalives sent", sent)
        .isBetween(sent * 0.99 - 5, (double) sent);
  }

  /**
   * Closes {@code registry}, whose 200 registrations revoke their leases all at once, each with its registration's
   * request timeout: the keepalive interval, 1 s here, and the close gives a revoke up after two of them. Two CI suites
   * (3624641: 67 of 200; d2dc545: 95 of 200, at a load average of 8.3 while etcd logged nothing slow) had revokes
   * unanswered in that time while muster-cli's test JVMs shared the two cores; a registry's {@code requestTimeout}
   * does not govern them (1a82213 set it to 15 s, which changed nothing). Whether a close revokes is
   * EtcdRegistryCloseIT's question, not this class's: a close that left only unanswered revokes behind passes here,
   * any other failure does not.
   */
  private static void closeLeavingUnansweredRevokes(EtcdRegistry registry) {
    try {
      registry.close();
    } catch (dev.muster.RegistryUnavailableException e) {
      String unanswered = "\\(could not revoke lease [0-9a-f]+: no answer within the request timeout\\)";
      String keys = "/muster/\\S+ " + unanswered;
      assertThat(e.getMessage()).as("a close whose failures are all unanswered revokes")
          .matches("(?s)closed, but could not revoke \\d+ of \\d+ registration\\(s\\); their keys expire with their"
              + " leases: " + keys + "(, " + keys + ")*");
      System.out.println("the close left unanswered revokes (their leases expire): "
          + e.getMessage().substring(0, Math.min(200, e.getMessage().length())));
    }
  }

  @Test
  void aKilledEtcdFailsTheKeepalivesOnTheStreamAndTheStreamOfTheNextClientKeepsEveryLease() {
    EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()));
    try {
      String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
      List<Registration> registrations = new ArrayList<>();
      List<EventRecorder> events = new ArrayList<>();
      List<Long> leases = new ArrayList<>();
      for (int i = 0; i < REGISTRATIONS; i++) {
        EventRecorder recorder = new EventRecorder();
        Registration r = registry.register(Instance.of(service, "10.0.0.7", 8000 + i),
            config(Duration.ofSeconds(10), Duration.ofSeconds(1)), recorder);
        registrations.add(r);
        events.add(recorder);
        leases.add(r.leaseId());
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> registry.connectionStats().get("keepalive.answered")
          >= 2L * REGISTRATIONS);

      etcd.member(0).kill();
      await().atMost(Duration.ofSeconds(30)).until(() -> events.stream()
          .allMatch(e -> e.types().contains(UNREACHABLE)));
      Map<String, Long> down = registry.connectionStats();
      etcd.member(0).restart();
      await().atMost(Duration.ofSeconds(60)).until(() -> events.stream()
          .allMatch(e -> e.types().contains(RECONNECTED)));
      Map<String, Long> after = registry.connectionStats();
      System.out.printf("%d registrations through an etcd crash: while down %s; after %s%n", REGISTRATIONS, down,
          after);

      assertThat(down.get("keepalive.failed")).as("keepalives failed by the stream's end").isPositive();
      assertThat(down.get("keepalive.ended")).as("the stream broke").isPositive();
      assertThat(after.get("keepalive.streams")).as("a stream reopened after etcd's restart")
          .isGreaterThan(down.get("keepalive.streams"));
      for (int i = 0; i < REGISTRATIONS; i++) {
        assertThat(registrations.get(i).leaseId()).isEqualTo(leases.get(i));
        assertThat(events.get(i).types()).as("registration %d", i).doesNotContain(LEASE_LOST, REREGISTERED, FAILED);
      }
    } finally {
      closeLeavingUnansweredRevokes(registry); // 200 revokes at once again, each within 1 s
    }
  }

  /**
   * etcd's simple tokens expire after {@code --auth-token-ttl} unused (2 s here). Ten registrations renew together
   * every 4 s, so the stream's token has expired by each round: 3.5.30 refuses the round's first keepalive and ends
   * the stream, a new token is fetched once, and every keepalive of the round is answered on a new stream. 3.4.23
   * checks no token on keepalives: one token serves the whole run.
   */
  @Test
  void withAuthKeepalivesCarryATokenAndAnExpiredTokenIsRenewed() throws Exception {
    String service = "secured-" + USERS.incrementAndGet();
    boolean checksTokens = !secured.member(0).versions().orElseThrow().server().startsWith("3.4.");
    EtcdRegistry registry = EtcdRegistry.connect(provider(service));
    List<Registration> registrations = new ArrayList<>();
    List<EventRecorder> events = new ArrayList<>();
    try {
      for (int i = 0; i < 10; i++) {
        EventRecorder recorder = new EventRecorder();
        registrations.add(NegativeControls.register(registry, Instance.of(service, "127.0.0.1", 9000 + i),
            config(Duration.ofSeconds(12), Duration.ofSeconds(4)),
            RegistrarControls.PRODUCTION.withReportKeepalives(true), recorder));
        events.add(recorder);
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> events.stream()
          .allMatch(e -> e.types().stream().filter(t -> t == KEEPALIVE).count() >= 4));
      Map<String, Long> stats = registry.connectionStats();
      System.out.printf("auth, etcd %s, 2 s tokens, keepalives every 4 s: %s%n",
          secured.member(0).versions().orElseThrow().server(), stats);

      for (EventRecorder e : events) {
        assertThat(e.types()).as("every keepalive answered, no lease lost").doesNotContain(UNREACHABLE,
            LEASE_LOST, REREGISTERED, FAILED);
      }
      if (checksTokens) {
        assertThat(secured.member(0).logSays("invalid auth token")).as("the token did expire").isTrue();
        assertThat(stats.get("keepalive.tokens")).as("a new one per round of ten, not per keepalive").isBetween(2L, 8L);
      } else {
        assertThat(stats.get("keepalive.tokens")).as("3.4 never refuses it").isEqualTo(1L);
      }
    } finally {
      // One at a time: jetcd's own token has long expired, and jetcd authenticates again for every call that finds
      // it so, at once (10 bcrypt checks in parallel took over 4 s on 3.4.23 beside the suite's other JVMs, and the
      // revokes timed out). That is jetcd's, not the stream's; the keepalive stream is closed with the registry.
      for (Registration r : registrations) {
        r.close();
      }
      registry.close();
    }
  }

  /**
   * The stream carries jetcd's own token, so on etcd lines that check a keepalive's token (3.5.28 and later) every
   * keepalive extends that token's life: with 2 s tokens and a keepalive every second, an update after 6 s of
   * nothing but keepalives needs no new authentication. (A token of the stream's own would leave jetcd's to expire,
   * and every registration's next call, such as its revoke at shutdown, would authenticate again, all at once.)
   * 3.4.23 checks no token on keepalives, so there jetcd's token expires as it always did.
   */
  @Test
  void withAuthTheKeepalivesKeepJetcdsTokenAliveWhereEtcdChecksThem() throws Exception {
    String service = "secured-" + USERS.incrementAndGet();
    boolean checksTokens = !secured.member(0).versions().orElseThrow().server().startsWith("3.4.");
    try (EtcdRegistry registry = EtcdRegistry.connect(provider(service))) {
      Registration r = registry.register(Instance.of(service, "127.0.0.1", 9000),
          config(Duration.ofSeconds(6), Duration.ofSeconds(1)));
      await().atMost(Duration.ofSeconds(30)).until(() -> registry.connectionStats().get("keepalive.answered") >= 2);
      double before = metric(secured.member(0).clientUrl(), AUTHENTICATE);
      long answered = registry.connectionStats().get("keepalive.answered");
      await().atMost(Duration.ofSeconds(30)).until(() -> registry.connectionStats().get("keepalive.answered")
          >= answered + 6); // three token lifetimes of nothing but keepalives
      r.update(i -> i.weight(7)).get(10, TimeUnit.SECONDS);
      double authentications = metric(secured.member(0).clientUrl(), AUTHENTICATE) - before;
      Map<String, Long> stats = registry.connectionStats();
      System.out.printf("auth, etcd %s, 2 s tokens, keepalives every 1 s: %.0f authentications for an update after"
          + " 6 s; %s%n", secured.member(0).versions().orElseThrow().server(), authentications, stats);

      assertThat(stats.get("keepalive.tokens")).as("the stream's one token, jetcd's").isEqualTo(1L);
      if (checksTokens) {
        assertThat(authentications).as("jetcd's token kept alive by the keepalives").isZero();
      }
    }
  }

  /** An etcd user allowed to register instances of {@code service} on the secured etcd, and its configuration. */
  private static EtcdConfig provider(String service) throws IOException {
    String user = "app-" + service;
    try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().endpoints(secured.endpointsString())
        .credentials("root", secured.rootPasswordFile()).build())) {
      auth.addUser(user, "app-secret");
      auth.grantProvider("default", service, user, null);
    }
    Path password = Files.createTempFile("muster-keepalive-it-", ".pw");
    Files.writeString(password, "app-secret\n");
    return EtcdConfig.builder().endpoints(secured.endpointsString()).credentials(user, password).build();
  }

  /** etcd's count of LeaseKeepAlive messages it received, from its own /metrics. */
  private static double received(URI member) throws IOException, InterruptedException {
    return metric(member, RECEIVED);
  }

  /** The sum of a counter in etcd's own /metrics, over its labels. */
  private static double metric(URI member, Pattern counter) throws IOException, InterruptedException {
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(member.resolve("/metrics"))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = counter.matcher(metrics);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }
}
