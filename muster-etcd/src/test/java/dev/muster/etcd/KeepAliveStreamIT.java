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
 * next client keeps every lease; with auth the stream carries a token, renewed when etcd lets it expire.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class KeepAliveStreamIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  private static final int REGISTRATIONS = 200;
  private static final Pattern RECEIVED = Pattern.compile(
      "grpc_server_msg_received_total\\{grpc_method=\"LeaseKeepAlive\"[^}]*} (\\S+)");

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
      registry.close(); // no drain: each lease is revoked, and no keepalive is sent after it
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

    assertThat(stats.get("keepalive.streams")).as("one stream carried every registration's keepalives")
        .isEqualTo(1L);
    assertThat(stats.get("keepalive.answered")).isGreaterThanOrEqualTo(5L * REGISTRATIONS);
    // Exactly one message per keepalive, but for the few the close may cut on the wire.
    assertThat(received[0]).as("etcd's LeaseKeepAlive messages for %d keepalives sent", sent)
        .isBetween(sent * 0.99 - 5, (double) sent);
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
      registry.close();
    }
  }

  /**
   * etcd's simple tokens expire after {@code --auth-token-ttl} unused (2 s here). Ten registrations renew together
   * every 4 s, so the stream's token has expired by each round: 3.5.30 refuses the round's first keepalive and ends
   * the stream, the token is renewed once, and every keepalive of the round is answered on a new stream. 3.4.23
   * checks no token on keepalives: one token serves the whole run.
   */
  @Test
  void withAuthKeepalivesCarryATokenAndAnExpiredTokenIsRenewed() throws Exception {
    try (EtcdCluster secured = EtcdCluster.builder().members(1).auth().authTokenTtl(Duration.ofSeconds(2)).build()
        .start()) {
      Path password = Files.createTempFile("muster-keepalive-it-", ".pw");
      Files.writeString(password, "app-secret\n");
      String service = "secured";
      try (EtcdAuth auth = EtcdAuth.connect(EtcdConfig.builder().endpoints(secured.endpointsString())
          .credentials("root", secured.rootPasswordFile()).build())) {
        auth.addUser("app", "app-secret");
        auth.grantProvider("default", service, "app", null);
      }
      boolean checksTokens = !secured.member(0).versions().orElseThrow().server().startsWith("3.4.");
      EtcdConfig app = EtcdConfig.builder().endpoints(secured.endpointsString()).credentials("app", password).build();
      try (EtcdRegistry registry = EtcdRegistry.connect(app)) {
        List<EventRecorder> events = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          EventRecorder recorder = new EventRecorder();
          NegativeControls.register(registry, Instance.of(service, "127.0.0.1", 9000 + i),
              config(Duration.ofSeconds(12), Duration.ofSeconds(4)),
              RegistrarControls.PRODUCTION.withReportKeepalives(true), recorder);
          events.add(recorder);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> events.stream()
            .allMatch(e -> e.types().stream().filter(t -> t == KEEPALIVE).count() >= 4));
        Map<String, Long> stats = registry.connectionStats();
        System.out.printf("auth, etcd %s: %s%n", secured.member(0).versions().orElseThrow().server(), stats);

        for (EventRecorder e : events) {
          assertThat(e.types()).as("every keepalive answered, no lease lost").doesNotContain(UNREACHABLE,
              LEASE_LOST, REREGISTERED, FAILED);
        }
        if (checksTokens) {
          assertThat(secured.member(0).logSays("invalid auth token")).as("the token did expire").isTrue();
          assertThat(stats.get("keepalive.tokens")).as("renewed, once per round of ten").isBetween(2L, 8L);
        } else {
          assertThat(stats.get("keepalive.tokens")).as("3.4 never refuses it").isEqualTo(1L);
        }
      }
    }
  }

  /** etcd's count of LeaseKeepAlive messages it received, from its own /metrics. */
  private static double received(URI member) throws IOException, InterruptedException {
    String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(member.resolve("/metrics"))
        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = RECEIVED.matcher(metrics);
    double sum = 0;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
    }
    return sum;
  }
}
