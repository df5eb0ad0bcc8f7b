package dev.muster.example.quickstart;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.testing.EtcdCluster;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The quickstart's provider and consumer, run as a user would run them, against a real etcd member. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class QuickstartIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void theConsumerReachesTheProviderByServiceName() throws Exception {
    try (Provider provider = Provider.start(etcd.endpointsString())) {
      List<String> answers = Consumer.call(etcd.endpointsString(), 3);

      assertThat(answers).containsOnly("hello from " + provider.id());
    }
  }

  @Test
  void micrometerIsNotNeededToCall() {
    assertThat(getClass().getClassLoader().getResource("io/micrometer/core/instrument/MeterRegistry.class"))
        .as("muster-core declares Micrometer optional, so a user without it gets none").isNull();
  }
}
