package dev.muster.conformance;

import static dev.muster.conformance.ConformanceTable.MAX_STALE;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
import dev.muster.testing.EtcdMember;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bounded staleness as every adapter applies it: etcd SIGKILLed, each adapter keeps serving the last set for
 * {@code maxStale} (8 s here), then refuses (FAIL_CLOSED: calls fail at once, the list is empty, DNS answers
 * SERVFAIL) until etcd is back, when all serve again.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class StalenessConformanceIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @TempDir
  Path dir;

  @Test
  void pastMaxStaleEveryAdapterRefusesAndServesAgainWhenEtcdIsBack() {
    String namespace = "conf" + UUID.randomUUID().toString().substring(0, 8);
    Checks checks = new Checks();
    EtcdMember member = etcd.member(0);
    try (Providers providers = new Providers(etcd.endpointsString(), namespace, dir);
         EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      Adapter.Setup setup = new Adapter.Setup(etcd.endpointsString(), namespace, providers.publicKeyFile(),
          Duration.ofSeconds(8), Duration.ZERO);
      providers.start("p1", false);
      providers.start("p2", false);
      try (Consumers consumers = new Consumers(registry, setup)) {
        for (Adapter a : consumers.all) {
          checks.ready("p1 and p2 seen", a, Duration.ofSeconds(30), o -> o.ids().equals(Set.of("p1", "p2")));
        }
        member.kill();
        try {
          for (Adapter a : consumers.all) {
            checks.eventually(MAX_STALE, a, Duration.ofSeconds(40), Adapter.Observation::refusedAll);
          }
        } finally {
          member.restart();
        }
        for (Adapter a : consumers.all) {
          checks.ready("p1 and p2 served again once etcd is back", a, Duration.ofSeconds(60),
              o -> o.ids().equals(Set.of("p1", "p2")) && o.refused() == 0);
        }
      }
    }
    checks.assertAllHeld();
  }
}
