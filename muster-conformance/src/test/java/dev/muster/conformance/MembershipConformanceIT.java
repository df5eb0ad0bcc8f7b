package dev.muster.conformance;

import static dev.muster.conformance.ConformanceTable.DRAINING;
import static dev.muster.conformance.ConformanceTable.SIGKILL;
import static dev.muster.conformance.ConformanceTable.STARTING;

import dev.muster.etcd.EtcdConfig;
import dev.muster.etcd.EtcdRegistry;
import dev.muster.testing.EtcdCluster;
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
 * A provider's life as every adapter sees it, on three real providers: p3 registered STARTING and then made ready
 * (SIGUSR1), p2 drained (SIGTERM: DRAINING for its 60 s drain, still serving), p1 SIGKILLed (its lease expires 3 s
 * later). Each adapter must exclude what takes no new calls, include what does, and (those that call) fail no call.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class MembershipConformanceIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @TempDir
  Path dir;

  @Test
  void startingThenUpDrainingAndSigkillAsEveryAdapterSeesThem() {
    String namespace = "conf" + UUID.randomUUID().toString().substring(0, 8);
    Checks checks = new Checks();
    try (Providers providers = new Providers(etcd.endpointsString(), namespace, dir);
         EtcdRegistry registry = EtcdRegistry.connect(EtcdConfig.of(etcd.endpointsString()))) {
      Adapter.Setup setup = new Adapter.Setup(etcd.endpointsString(), namespace, providers.publicKeyFile(), null,
          Duration.ZERO);
      Providers.Provider p1 = providers.start("p1", false);
      Providers.Provider p2 = providers.start("p2", false);
      Providers.Provider p3 = providers.start("p3", true);
      try (Consumers consumers = new Consumers(registry, setup)) {
        for (Adapter a : consumers.all) {
          checks.ready("p1 and p2 seen", a, Duration.ofSeconds(30), o -> o.ids().equals(Set.of("p1", "p2")));
        }

        for (Adapter a : consumers.all) {
          checks.always(STARTING, a, Duration.ofSeconds(1), o -> !o.ids().contains("p3"));
        }
        p3.ready();
        for (Adapter a : consumers.all) {
          checks.eventually(STARTING, a, Duration.ofSeconds(15), o -> o.ids().contains("p3"));
        }

        p2.drain();
        for (Adapter a : consumers.all) {
          checks.eventually(DRAINING, a, Duration.ofSeconds(15), o -> !o.ids().contains("p2"),
              o -> o.failed() == 0);
        }
        for (Adapter a : consumers.all) {
          checks.always(DRAINING, a, Duration.ofSeconds(1), o -> !o.ids().contains("p2") && o.failed() == 0);
        }

        p1.kill();
        for (Adapter a : consumers.all) {
          checks.eventually(SIGKILL, a, Duration.ofSeconds(20), o -> o.ids().equals(Set.of("p3")),
              o -> o.failed() == 0);
        }
      }
    }
    checks.assertAllHeld();
  }
}
