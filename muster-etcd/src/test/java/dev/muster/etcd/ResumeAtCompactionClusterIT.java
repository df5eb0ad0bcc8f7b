package dev.muster.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointCache;
import dev.muster.registry.Instance;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import dev.muster.testing.FaultProxy;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.GetOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * etcd 18089 on three members: while the cache is cut off from every member, an instance is deleted at R, etcd
 * compacts at R, and the leader is killed; the cache then resumes on a surviving member and must not keep the
 * deleted instance.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class ResumeAtCompactionClusterIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  @Test
  void aDeleteAtTheCompactionRevisionIsNotLostWhenTheLeaderDiesDuringTheCut() throws Exception {
    String service = "svc-" + UUID.randomUUID().toString().substring(0, 8);
    List<FaultProxy> proxies = new ArrayList<>();
    etcd.members().forEach(m -> proxies.add(FaultProxy.to(m.clientUrl())));
    String viaProxies = proxies.stream().map(p -> p.uri().toString()).collect(Collectors.joining(","));
    try (PlainEtcdWriter registry = new PlainEtcdWriter(etcd.endpoints(), service);
         EtcdRegistry muster = EtcdRegistry.connect(EtcdConfig.of(viaProxies))) {
      Instance a = registry.instance(1);
      Instance b = registry.instance(2);
      registry.put(a);
      long before = registry.put(b);
      EndpointCache cache = muster.watch(CacheConfig.builder(service).progressInterval(Duration.ofSeconds(1))
          .progressTimeout(Duration.ofSeconds(1)).backoff(Duration.ofMillis(50), Duration.ofMillis(500)).build());
      registry.awaitMatches(cache, before, Duration.ofSeconds(30));

      proxies.forEach(FaultProxy::cut);
      await().atMost(Duration.ofSeconds(30)).until(cache::isStale);
      long deleted = registry.delete(a);
      registry.compact(deleted);
      awaitCompactedOnEveryMember(deleted);
      EtcdMember leader = etcd.killLeader();
      etcd.awaitLeader(Duration.ofSeconds(30));
      proxies.forEach(FaultProxy::pass);

      registry.awaitMatches(cache, deleted, Duration.ofSeconds(30));
      assertThat(cache.current().asMap()).isEqualTo(registry.at(0));
      assertThat(cache.current().contains(a.key())).isFalse();
      assertThat(cache.resyncCount()).as("the resume below the compaction was answered with compacted")
          .isEqualTo(1);
      await().atMost(Duration.ofSeconds(30)).until(() -> !cache.isStale());
      System.out.printf("leader %s killed during the cut; the cache resynced and holds %d instances at %d%n",
          leader.name(), cache.current().size(), cache.revision());
    } finally {
      proxies.forEach(FaultProxy::close);
    }
  }

  /** Waits until each member has applied the compaction (a local read below it is refused). */
  private static void awaitCompactedOnEveryMember(long compacted) {
    for (EtcdMember m : etcd.members()) {
      try (Client c = Client.builder().endpoints(m.clientUrl()).build()) {
        await().atMost(Duration.ofSeconds(20)).until(() -> {
          try {
            c.getKVClient().get(PlainEtcdWriter.bytes("/"), GetOption.builder().withRevision(compacted - 1)
                .withSerializable(true).build()).get(5, TimeUnit.SECONDS);
            return false;
          } catch (ExecutionException e) {
            return io.grpc.Status.fromThrowable(e.getCause()).getCode() == io.grpc.Status.Code.OUT_OF_RANGE;
          }
        });
      }
    }
  }
}
