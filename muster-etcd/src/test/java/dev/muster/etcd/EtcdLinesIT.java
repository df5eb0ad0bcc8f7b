package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.registry.RegistrarConfig;
import dev.muster.registry.Registration;
import dev.muster.testing.EtcdBinary;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdVersion;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.options.CompactOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The behaviour of etcd that Muster relies on and that differs, or could differ, between the lines Muster supports:
 * 3.5 (the default, 3.5.30) and 3.4 (3.4.23, run again by the build's etcd-3.4 execution). Each test asserts what
 * the line it runs on does, so a change in either line fails here first. docs/etcd-watch-bugs.md has the table.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class EtcdLinesIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().build();

  private static final EtcdVersion VERSION = EtcdBinary.runningVersion();
  /** 3.5.28 (and 3.4.42) check the token and permissions of calls that had none (CVE-2026-33413). */
  private static final boolean CHECKS_LEASES_AND_STATUS = VERSION.compareTo(EtcdVersion.parse("3.5.28")) >= 0
      || (VERSION.line().equals("3.4") && VERSION.compareTo(EtcdVersion.parse("3.4.42")) >= 0);
  private static final String SERVICE = "lines";

  private final String key = "/lines/" + UUID.randomUUID();

  @BeforeAll
  static void users() {
    try (EtcdAuth auth = EtcdAuth.connect(root())) {
      auth.addUser("provider", "provider-secret");
      auth.grantProvider("default", SERVICE, "provider", null);
      auth.addUser("stranger", "stranger-secret");
      auth.grantConsumer("default", "elsewhere", "stranger");
    }
  }

  private static EtcdConfig root() {
    return EtcdConfig.builder().endpoints(etcd.endpointsString()).credentials("root", etcd.rootPassword()).build();
  }

  private static Client jetcd(String user, String password) {
    return Client.builder().endpoints(etcd.endpoints().toArray(java.net.URI[]::new))
        .user(bytes(user)).password(bytes(password)).build();
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  /** The first status code in the cause chain: jetcd's own exceptions carry gRPC's code names. */
  private static Status.Code code(Throwable t) {
    for (Throwable e = t; e != null && e != e.getCause(); e = e.getCause()) {
      if (e instanceof EtcdException ee) {
        return Status.Code.valueOf(ee.getErrorCode().name());
      } else if (e instanceof StatusRuntimeException sre) {
        return sre.getStatus().getCode();
      } else if (e instanceof StatusException se) {
        return se.getStatus().getCode();
      }
    }
    return Status.Code.UNKNOWN;
  }

  /**
   * etcd 18089: a watch that starts exactly at the compaction revision does not get the DELETE made at it. In 3.4.23;
   * fixed in 3.5.16 and 3.4.34. Muster's resume rule (start at the checkpoint, so the events at the start revision are
   * never needed) stays on for every line: it costs nothing, and on 3.4.23 it is what keeps the DELETE.
   */
  @Test
  void aWatchStartingAtTheCompactionRevisionGetsItsDeleteOnlyWhere18089IsFixed() throws Exception {
    try (Client c = jetcd("root", etcd.rootPassword())) {
      c.getKVClient().put(bytes(key), bytes("v")).get(10, TimeUnit.SECONDS);
      long deleted = c.getKVClient().delete(bytes(key)).get(10, TimeUnit.SECONDS).getHeader().getRevision();
      // Physical: the call returns once the backend dropped the compacted revisions. Without it the watch below races
      // etcd's background compaction, and 3.4.23 delivered the DELETE in 8 of 40 tries (it had not dropped it yet).
      c.getKVClient().compact(deleted, CompactOption.builder().withCompactPhysical(true).build())
          .get(10, TimeUnit.SECONDS);
      List<WatchEvent> events = new CopyOnWriteArrayList<>();
      try (var watcher = c.getWatchClient().watch(bytes(key), WatchOption.builder().withRevision(deleted).build(),
          r -> events.addAll(r.getEvents()))) {
        // A later put on the same key proves the watch is live: its event arrives in every line.
        c.getKVClient().put(bytes(key), bytes("again")).get(10, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(10)).until(() -> events.stream()
            .anyMatch(e -> e.getEventType() == WatchEvent.EventType.PUT));
      }
      boolean deleteSeen = events.stream().anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE);
      boolean fixed = VERSION.compareTo(EtcdVersion.parse(VERSION.line().equals("3.4") ? "3.4.34" : "3.5.16")) >= 0;
      assertThat(deleteSeen).as("etcd %s delivers the DELETE at the compaction revision", VERSION).isEqualTo(fixed);
    }
  }

  /**
   * Leases: before 3.5.28 any client, even without a token, could keep any lease alive (the documented limit that a
   * user who learns a provider's lease id can keep its record from expiring). Since then a keepalive needs a token and
   * put permission on every key the lease holds. Muster's registrar needs only its own keys; its keepalive renews an
   * expired token itself ({@code TokenExpiryIT}).
   */
  @Test
  void aStrangerCanKeepAProvidersLeaseAliveOnlyBeforeTheLeaseChecks() throws Exception {
    EtcdConfig provider = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("provider", "provider-secret").build();
    try (EtcdRegistry registry = EtcdRegistry.connect(provider);
         Registration r = registry.register(Instance.of(SERVICE, "127.0.0.1", 9000).id("kept"),
             RegistrarConfig.builder().ttl(Duration.ofSeconds(20)).shutdownHook(false).build());
         Client stranger = jetcd("stranger", "stranger-secret");
         Client anonymous = Client.builder().endpoints(etcd.endpoints().toArray(java.net.URI[]::new)).build()) {
      Throwable byStranger = catchThrowable(() -> stranger.getLeaseClient().keepAliveOnce(r.leaseId())
          .get(10, TimeUnit.SECONDS));
      Throwable byAnonymous = catchThrowable(() -> anonymous.getLeaseClient().keepAliveOnce(r.leaseId())
          .get(10, TimeUnit.SECONDS));
      if (CHECKS_LEASES_AND_STATUS) {
        assertThat(code(byStranger)).as("etcd %s: a stranger's keepalive", VERSION)
            .isEqualTo(Status.Code.PERMISSION_DENIED);
        assertThat(byAnonymous).as("etcd %s: a keepalive without a token", VERSION).isNotNull();
      } else {
        assertThat(byStranger).as("etcd %s: a stranger's keepalive", VERSION).isNull();
        assertThat(byAnonymous).as("etcd %s: a keepalive without a token", VERSION).isNull();
      }
    }
  }

  /**
   * A member's status (for {@code muster doctor} and the console): answered to anyone before 3.5.28, to root only
   * from 3.5.28 to 3.5.31 (any user again from 3.5.32). Muster reports such a refusal as one, naming the grant,
   * never as a member that does not answer.
   */
  @Test
  void memberStatusIsRefusedToOtherUsersOnlyWhereEtcdChecksIt() {
    EtcdConfig stranger = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("stranger", "stranger-secret").build();
    try (EtcdMaintenance maintenance = EtcdMaintenance.connect(stranger)) {
      EtcdMaintenance.MemberStatus s = maintenance.status(Duration.ofSeconds(5)).get(0);
      boolean rootOnly = CHECKS_LEASES_AND_STATUS && VERSION.compareTo(EtcdVersion.parse("3.5.32")) < 0;
      if (rootOnly) {
        assertThat(s.answered()).as("etcd %s: status to a user without root", VERSION).isFalse();
        assertThat(s.refused()).as("refused, not silent: %s", s.failure()).isTrue();
        assertThat(s.failure()).contains("stranger", "root");
      } else {
        assertThat(s.answered()).as("etcd %s: status to a user without root: %s", VERSION, s.failure()).isTrue();
        assertThat(s.version()).isEqualTo(VERSION.toString());
      }
    }
  }

  /**
   * Progress: the cache asks for a progress notification when its watch has been quiet for {@code progressInterval}
   * and goes stale when none comes within {@code progressTimeout}. 3.4.23 answers at once at the store's revision;
   * 3.5.8 and later answer only when every watcher of the stream is synced (etcd 15220). Both answer an idle, synced
   * watch, so an idle cache never goes stale on either line; the checkpoint never moves on a progress answer.
   */
  @Test
  void anIdleCacheGetsItsProgressAnswersAndNeverGoesStale() throws Exception {
    try (EtcdRegistry registry = EtcdRegistry.connect(root())) {
      EndpointCache cache = registry.watch(CacheConfig.builder("idle").progressInterval(Duration.ofMillis(300))
          .progressTimeout(Duration.ofMillis(700)).build());
      assertThat(cache.awaitReady(Duration.ofSeconds(20))).isTrue();
      long revision = cache.revision();
      Thread.sleep(5_000); // some 15 quiet intervals, each answered
      assertThat(cache.isStale()).as("etcd %s answered every progress request", VERSION).isFalse();
      assertThat(cache.staleSince()).isEmpty();
      assertThat(cache.revision()).as("a progress answer is never a checkpoint").isEqualTo(revision);
    }
  }

  /**
   * Lease checkpointing is off by default in both lines ({@code --experimental-enable-lease-checkpoint-persist}
   * since 3.5.2): a member that restarts gives every lease its whole TTL again (plus an election timeout), so a
   * provider keeps its lease across an etcd restart longer than what was left of it.
   */
  @Test
  void aRestartedMemberGivesALeaseItsWholeTtlAgain() throws Exception {
    try (Client c = jetcd("root", etcd.rootPassword())) {
      long lease = c.getLeaseClient().grant(8).get(10, TimeUnit.SECONDS).getID();
      Thread.sleep(4_000);
      long before = c.getLeaseClient().timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
          .get(10, TimeUnit.SECONDS).getTTL();
      etcd.member(0).kill();
      etcd.member(0).restart();
      etcd.awaitHealthy(Duration.ofSeconds(30));
      long after = await().atMost(Duration.ofSeconds(20)).ignoreExceptions()
          .until(() -> c.getLeaseClient().timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
              .get(5, TimeUnit.SECONDS).getTTL(), ttl -> ttl > 0);
      // The TTL grew across the restart, which only a reset to the whole TTL can do (a checkpointed lease goes on
      // shrinking). Not "at least 7 s": a fresh-clone suite run of 5dc8977 read 6 s, the read coming some 2 s after the reset under load.
      assertThat(before).isLessThanOrEqualTo(5);
      assertThat(after).as("etcd %s: the lease's TTL after a restart (%d s before it)", VERSION, before)
          .isGreaterThan(before);
    }
  }

  /**
   * The status codes Muster classifies (by code, never by text) are the same in both lines: a read below the
   * compaction is OUT_OF_RANGE, a wrong password INVALID_ARGUMENT under jetcd's UNAUTHENTICATED, a read outside a
   * user's roles PERMISSION_DENIED, a keepalive of a revoked lease NOT_FOUND.
   */
  @Test
  void theErrorCodesMusterClassifiesAreTheSameInBothLines() throws Exception {
    try (Client c = jetcd("root", etcd.rootPassword());
         Client wrong = jetcd("stranger", "not-the-password");
         Client stranger = jetcd("stranger", "stranger-secret")) {
      c.getKVClient().put(bytes(key), bytes("1")).get(10, TimeUnit.SECONDS);
      long old = c.getKVClient().put(bytes(key), bytes("2")).get(10, TimeUnit.SECONDS).getHeader().getRevision() - 1;
      c.getKVClient().compact(old + 1).get(10, TimeUnit.SECONDS);
      Throwable compacted = catchThrowable(() -> c.getKVClient().get(bytes(key),
          GetOption.builder().withRevision(old).build()).get(10, TimeUnit.SECONDS));
      assertThat(code(compacted)).isEqualTo(Status.Code.OUT_OF_RANGE);

      Throwable badPassword = catchThrowable(() -> wrong.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS));
      assertThat(badPassword).isInstanceOf(ExecutionException.class);
      assertThat(code(badPassword)).isIn(Status.Code.UNAUTHENTICATED, Status.Code.INVALID_ARGUMENT);

      Throwable denied = catchThrowable(() -> stranger.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS));
      assertThat(code(denied)).isEqualTo(Status.Code.PERMISSION_DENIED);

      long lease = c.getLeaseClient().grant(30).get(10, TimeUnit.SECONDS).getID();
      c.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS);
      Throwable gone = catchThrowable(() -> c.getLeaseClient().keepAliveOnce(lease).get(10, TimeUnit.SECONDS));
      assertThat(code(gone)).isEqualTo(Status.Code.NOT_FOUND);
    }
  }
}
