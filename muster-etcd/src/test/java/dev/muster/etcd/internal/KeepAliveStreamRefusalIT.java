package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.etcd.EtcdAuth;
import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.internal.EtcdOps.EtcdCallException;
import dev.muster.registry.RegistryLayout;
import dev.muster.testing.EtcdCluster;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A keepalive etcd refuses ends the shared stream; the refusal belongs to that keepalive alone. Since 3.5.28 a
 * keepalive needs put permission on every key of its lease: here one lease holds a key the user may not write, and
 * its keepalive is refused (PERMISSION_DENIED) in rounds where twenty others keep their own leases alive at the same
 * moment on the same stream. Each refusal must reach the refused keepalive only; the ones written behind it
 * are sent again on a new stream and answered. 3.4.23 checks nothing and answers all of them.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class KeepAliveStreamRefusalIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).auth().build();

  private static final int INNOCENT = 20;

  @Test
  void aRefusedKeepaliveFailsAloneAndTheKeepalivesWrittenBehindItAreSentAgain() throws Exception {
    EtcdConfig root = EtcdConfig.builder().endpoints(etcd.endpointsString())
        .credentials("root", etcd.rootPasswordFile()).build();
    try (EtcdAuth auth = EtcdAuth.connect(root)) {
      auth.addUser("app", "app-secret");
      auth.grantProvider("default", "kept", "app", null);
    }
    String allowed = RegistryLayout.defaults().servicePrefix("default", "kept");
    List<Long> innocent = new ArrayList<>();
    long denied;
    try (Client c = Client.builder().endpoints(etcd.endpoints().toArray(java.net.URI[]::new))
        .user(bytes("root")).password(bytes(etcd.rootPassword())).build()) {
      for (int i = 0; i < INNOCENT; i++) {
        long lease = c.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
        c.getKVClient().put(bytes(allowed + "v1/i" + i), bytes("x"), PutOption.builder().withLeaseId(lease).build())
            .get(10, TimeUnit.SECONDS);
        innocent.add(lease);
      }
      denied = c.getLeaseClient().grant(60).get(10, TimeUnit.SECONDS).getID();
      c.getKVClient().put(bytes("/elsewhere/x"), bytes("x"), PutOption.builder().withLeaseId(denied).build())
          .get(10, TimeUnit.SECONDS);
    }
    boolean checksLeases = !etcd.member(0).versions().orElseThrow().server().startsWith("3.4.");

    EtcdConfig app = EtcdConfig.builder().endpoints(etcd.endpointsString()).credentials("app", "app-secret").build();
    ConcurrentLinkedQueue<String> innocentFailures = new ConcurrentLinkedQueue<>();
    ConcurrentLinkedQueue<String> deniedOutcomes = new ConcurrentLinkedQueue<>();
    AtomicInteger innocentAnswered = new AtomicInteger();
    Map<String, Long> stats;
    try (EtcdConnection connection = new EtcdConnection(app)) {
      KeepAliveStream stream = connection.keepAliveStream();
      // 60 rounds, one every 50 ms: the 21 keepalives of a round start together, so some are written behind the
      // refused one. Every lease was granted for 60 s: none needs its keepalives to live through the test.
      ExecutorService senders = Executors.newFixedThreadPool(INNOCENT + 1);
      ScheduledExecutorService rounds = Executors.newSingleThreadScheduledExecutor();
      rounds.scheduleAtFixedRate(() -> {
        List<java.util.concurrent.Callable<Void>> round = new ArrayList<>();
        for (long lease : innocent) {
          round.add(() -> {
            try {
              stream.keepAlive(lease, Duration.ofSeconds(5));
              innocentAnswered.incrementAndGet();
            } catch (EtcdCallException e) {
              innocentFailures.add(e.kind() + ": " + e.getMessage());
            }
            return null;
          });
        }
        round.add(() -> {
          try {
            stream.keepAlive(denied, Duration.ofSeconds(5));
            deniedOutcomes.add("answered");
          } catch (EtcdCallException e) {
            deniedOutcomes.add(e.kind().name());
          }
          return null;
        });
        try {
          senders.invokeAll(round);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }, 0, 50, TimeUnit.MILLISECONDS);
      await().atMost(Duration.ofSeconds(60)).until(() -> deniedOutcomes.size() >= 60);
      rounds.shutdown();
      assertThat(rounds.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
      senders.shutdown();
      stats = connection.stats();
    }
    System.out.printf("etcd %s: %d innocent keepalives answered, %d failed; the denied lease's: %s; %s%n",
        etcd.member(0).versions().orElseThrow().server(), innocentAnswered.get(), innocentFailures.size(),
        deniedOutcomes.stream().distinct().toList(), stats);

    assertThat(innocentFailures).as("keepalives of leases etcd did not refuse").isEmpty();
    assertThat(innocentAnswered.get()).isGreaterThanOrEqualTo(INNOCENT * 60);
    if (checksLeases) {
      assertThat(deniedOutcomes).as("the lease with a key the user may not write").hasSizeGreaterThanOrEqualTo(60)
          .containsOnly("DENIED");
      assertThat(stats.get("keepalive.resent")).as("keepalives written behind a refused one, sent again")
          .isPositive();
    } else {
      assertThat(deniedOutcomes).hasSizeGreaterThanOrEqualTo(60).containsOnly("answered");
    }
  }

  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }
}
