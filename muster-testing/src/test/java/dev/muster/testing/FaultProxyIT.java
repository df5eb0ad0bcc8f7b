package dev.muster.testing;

import static dev.muster.testing.Clients.bytes;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.etcd.jetcd.Client;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class FaultProxyIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void cutBreaksAJetcdClientsCallsAndPassRestoresThem() throws Exception {
    try (FaultProxy proxy = FaultProxy.to(etcd.member(0).clientUrl());
         Client client = Clients.to(proxy.uri())) {
      client.getKVClient().put(bytes("/proxy/cut"), bytes("1")).get(10, TimeUnit.SECONDS);

      proxy.cut();
      assertThatThrownBy(() -> client.getKVClient().get(bytes("/proxy/cut")).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);

      proxy.pass();
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() ->
          assertThat(client.getKVClient().get(bytes("/proxy/cut")).get(2, TimeUnit.SECONDS).getKvs()).hasSize(1));
    }
  }

  @Test
  void blackholeMakesACallHangUntilItsDeadlineInsteadOfFailingFast() throws Exception {
    try (FaultProxy proxy = FaultProxy.to(etcd.member(0).clientUrl());
         Client client = Clients.to(proxy.uri())) {
      client.getKVClient().put(bytes("/proxy/hole"), bytes("1")).get(10, TimeUnit.SECONDS);

      proxy.blackhole();
      long start = System.nanoTime();
      assertThatThrownBy(() -> client.getKVClient().get(bytes("/proxy/hole")).get(2, TimeUnit.SECONDS))
          .isInstanceOf(TimeoutException.class);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
      assertThat(proxy.openConnections()).isPositive();

      proxy.pass();
      assertThat(client.getKVClient().get(bytes("/proxy/hole")).get(20, TimeUnit.SECONDS).getKvs()).hasSize(1);
    }
  }

  @Test
  void latencyDelaysEveryRoundTripByAtLeastTheConfiguredTime() throws Exception {
    try (FaultProxy proxy = FaultProxy.to(etcd.member(0).clientUrl());
         Client client = Clients.to(proxy.uri())) {
      client.getKVClient().put(bytes("/proxy/slow"), bytes("1")).get(10, TimeUnit.SECONDS);

      proxy.latency(Duration.ofMillis(300));
      long start = System.nanoTime();
      client.getKVClient().get(bytes("/proxy/slow")).get(20, TimeUnit.SECONDS);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
      proxy.pass();
    }
  }
}
