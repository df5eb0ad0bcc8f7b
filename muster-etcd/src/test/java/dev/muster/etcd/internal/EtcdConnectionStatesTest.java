package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.internal.EtcdConnection.Verdict;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The connection's states (docs/design-storms.md, "The design"): users report, the connection alone replaces its
 * client. A plain loopback listener stands in for etcd's port: the probe only connects, and jetcd's clients connect
 * lazily, so no call ever reaches it. The state machine and the probe's 100 ms sharing window read a fake clock:
 * the tests move it past the window to have the next call probe again ({@link #awaitNewProbe()}).
 */
class EtcdConnectionStatesTest {
  private static final long SECOND = Duration.ofSeconds(1).toNanos();
  private final AtomicLong now = new AtomicLong(1_000 * SECOND);
  private ServerSocket port;
  private int portNumber;
  private EtcdConnection connection;

  @BeforeEach
  void start() throws IOException {
    port = listen(0);
    portNumber = port.getLocalPort();
    // requestTimeout 2 s (the default): a client is young for 4 s
    connection = new EtcdConnection(EtcdConfig.of("http://127.0.0.1:" + portNumber), now::get);
  }

  @AfterEach
  void stop() throws IOException {
    connection.close();
    port.close();
  }

  @Test
  void aFailureIsOutvotedByAnySuccessOnTheClientAfterItsAttemptStarted() {
    now.addAndGet(10 * SECOND); // old enough to be replaced
    Client k = connection.client();
    long attempt = now.get();
    now.addAndGet(SECOND);
    connection.succeeded(k); // a watch resumed on k after the straggler's attempt began

    assertThat(connection.failed(k, attempt, "a straggler's timeout")).isEqualTo(Verdict.OUTVOTED);
    assertThat(connection.isCurrent(k)).isTrue();
    assertThat(connection.resets()).isZero();
  }

  @Test
  void nothingIsReplacedWhileEtcdRefusesConnectionsAndTheClientIsReplacedOnceWhenItAcceptsAgain() throws Exception {
    now.addAndGet(10 * SECOND);
    Client k = connection.client();
    port.close();
    for (int i = 0; i < 5; i++) {
      awaitNewProbe();
      now.addAndGet(SECOND);
      assertThat(connection.failed(k, now.get(), "watch refused")).as("report %d", i).isEqualTo(Verdict.DOWN);
    }
    assertThat(connection.isCurrent(k)).isTrue();
    assertThat(connection.resets()).isZero();

    port = listen(portNumber);
    awaitNewProbe();
    assertThat(connection.reachable()).isTrue();

    assertThat(connection.isCurrent(k)).as("replaced when etcd accepts again").isFalse();
    assertThat(connection.stats()).containsEntry("replaced.accepts_again", 1L).containsEntry("replaced.suspect", 0L);
    Client fresh = connection.client();
    for (int i = 0; i < 3; i++) {
      awaitNewProbe();
      assertThat(connection.reachable()).isTrue();
    }
    assertThat(connection.failed(k, now.get(), "a report about the old client")).isEqualTo(Verdict.STALE_CLIENT);
    assertThat(connection.client()).as("once").isSameAs(fresh);
    assertThat(connection.resets()).isEqualTo(1);
  }

  @Test
  void aClientThatSucceededWhileEtcdSeemedDownIsKeptWhenItAcceptsAgain() throws Exception {
    Client k = connection.client();
    port.close();
    awaitNewProbe();
    assertThat(connection.reachable()).isFalse();
    now.addAndGet(SECOND);
    connection.succeeded(k); // another member answered on it, say

    port = listen(portNumber);
    awaitNewProbe();
    assertThat(connection.reachable()).isTrue();

    assertThat(connection.isCurrent(k)).isTrue();
    assertThat(connection.resets()).isZero();
  }

  @Test
  void aSuspectClientIsReplacedOnlyOnceItHadTwiceItsConnectTimeoutToConnect() throws Exception {
    Client k = connection.client();
    now.addAndGet(3 * SECOND);
    assertThat(connection.failed(k, now.get(), "no answer")).isEqualTo(Verdict.YOUNG);
    assertThat(connection.isCurrent(k)).isTrue();

    now.addAndGet(2 * SECOND);
    awaitNewProbe();
    assertThat(connection.failed(k, now.get(), "no answer")).as("old enough, but failing only since now")
        .isEqualTo(Verdict.EARLY);
    now.addAndGet(2 * SECOND);
    awaitNewProbe();
    assertThat(connection.failed(k, now.get(), "no answer")).isEqualTo(Verdict.REPLACED);
    assertThat(connection.isCurrent(k)).isFalse();
    assertThat(connection.stats()).containsEntry("replaced.suspect", 1L).containsEntry("reports.young", 1L)
        .containsEntry("reports.early", 1L);

    Client fresh = connection.client();
    now.addAndGet(SECOND);
    assertThat(connection.failed(fresh, now.get(), "no answer")).as("the fresh one is young")
        .isEqualTo(Verdict.YOUNG);
    assertThat(connection.resets()).isEqualTo(1);
  }

  /**
   * A member of a cluster dies: every stream on it breaks at once and their reports find no success since their
   * attempts began (the cluster was quiet), while the channel moves to another member and the retries succeed there.
   * Before the rule of persistence, the first report replaced the client as suspect and broke the watches that had
   * already moved (the scale bench's rolling restart, 1 to 3 replacements per member kill; RollingRestartIT).
   */
  @Test
  void failuresReplaceASuspectClientOnlyOnceTheyPersistedForAConnectTimeoutWithNoSuccess() {
    now.addAndGet(10 * SECOND);
    Client k = connection.client();
    long quietSince = now.get();
    now.addAndGet(30 * SECOND); // quiet: nobody succeeded for 30 s
    for (int i = 0; i < 50; i++) {
      assertThat(connection.failed(k, quietSince, "the watch stream broke")).as("report %d", i)
          .isEqualTo(Verdict.EARLY);
    }
    now.addAndGet(SECOND / 5);
    connection.succeeded(k); // the retries resumed on another member
    now.addAndGet(SECOND);
    long attempt = now.get();
    assertThat(connection.failed(k, attempt, "a later failure")).as("a new run of failures")
        .isEqualTo(Verdict.EARLY);
    now.addAndGet(SECOND);
    awaitNewProbe();
    assertThat(connection.failed(k, attempt, "still failing")).isEqualTo(Verdict.EARLY);
    now.addAndGet(SECOND);
    awaitNewProbe();
    assertThat(connection.failed(k, attempt, "still failing, 2 s on")).isEqualTo(Verdict.REPLACED);
    assertThat(connection.stats()).containsEntry("replaced.suspect", 1L).containsEntry("reports.early", 52L);
  }

  @Test
  void successesAreRecordedAtMostOncePerResolutionAndStillOutvoteOlderAttempts() {
    now.addAndGet(10 * SECOND);
    Client k = connection.client();
    long attempt = now.get();
    now.addAndGet(EtcdConnection.SUCCESS_RESOLUTION.toNanos());
    connection.succeeded(k);
    now.addAndGet(1); // a burst of successes inside one resolution: the first one recorded is enough
    connection.succeeded(k);

    assertThat(connection.failed(k, attempt, "late")).isEqualTo(Verdict.OUTVOTED);
  }

  /**
   * Failure reports share the probe's answer. One that is handed the answer "etcd accepts again" while the thread that
   * probed has not yet left DOWN must not replace the client as suspect: leaving DOWN (one replacement, ACCEPTS_AGAIN)
   * comes first. The 300 caches of {@code EndpointCacheRestartIT} hit that gap once: a cache's report replaced the
   * client as SUSPECT, and the prober then found the fresh client "already succeeded since" and kept it.
   */
  @Test
  void reportsHandedTheSharedProbeOfEtcdAcceptingAgainLeaveDownBeforeTheyDecide() throws Exception {
    for (int round = 1; round <= 5; round++) {
      now.addAndGet(10 * SECOND); // the client is old enough to be replaced as suspect
      Client k = connection.client();
      long attempt = now.get();
      port.close();
      awaitNewProbe();
      assertThat(connection.failed(k, attempt, "etcd went away")).isEqualTo(Verdict.DOWN);
      now.addAndGet(SECOND);
      port = listen(portNumber);
      awaitNewProbe();

      java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
      java.util.List<Thread> reporters = new java.util.ArrayList<>();
      for (int i = 0; i < 16; i++) {
        Thread t = new Thread(() -> {
          try {
            go.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
          connection.failed(k, attempt, "a watch broken by the outage");
        });
        t.start();
        reporters.add(t);
      }
      go.countDown();
      for (Thread t : reporters) {
        t.join();
      }
      assertThat(connection.stats()).as("round %d", round).containsEntry("replaced.suspect", 0L)
          .containsEntry("replaced.accepts_again", (long) round);
    }
  }

  private static ServerSocket listen(int portNumber) throws IOException {
    ServerSocket s = new ServerSocket();
    s.setReuseAddress(true);
    s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), portNumber), 50);
    return s;
  }

  /** The probe's answer is shared for 100 ms of the connection's clock: move it past, so the next call probes. */
  private void awaitNewProbe() {
    now.addAndGet(EtcdConnection.PROBE_SHARED_FOR.toNanos());
  }
}
