package dev.muster.testing;

import static dev.muster.testing.Clients.bytes;
import static dev.muster.testing.Clients.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 3, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class EtcdClusterIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(3).build();

  @Test
  void threeMembersStartHealthyOnDistinctLoopbackPortsWithTheirOwnDataDirectories() {
    assertThat(etcd.members()).hasSize(3);
    assertThat(etcd.endpoints()).doesNotHaveDuplicates().allSatisfy(u -> assertThat(u.getHost()).isEqualTo("127.0.0.1"));
    assertThat(etcd.members()).extracting(EtcdMember::dataDir).doesNotHaveDuplicates();
    assertThat(etcd.members()).allSatisfy(m -> assertThat(m.pid()).isPresent());
    assertThat(etcd.endpointsString()).contains(",");
  }

  @Test
  void losingTheMajorityStopsLinearizableReadsButASerializableReadOnTheSurvivorStillAnswers() throws Exception {
    try (Client all = Clients.to(etcd.endpoints())) {
      all.getKVClient().put(bytes("/launcher/before"), bytes("kept")).get(10, TimeUnit.SECONDS);
    }
    List<EtcdMember> killed = etcd.killMajority();
    assertThat(killed).hasSize(2).noneMatch(EtcdMember::isRunning);
    EtcdMember survivor = etcd.member(0);

    try (Client onSurvivor = Clients.to(survivor.clientUrl())) {
      assertThatThrownBy(() -> onSurvivor.getKVClient().get(bytes("/launcher/before")).get(4, TimeUnit.SECONDS))
          .isInstanceOfAny(ExecutionException.class, TimeoutException.class);

      GetResponse serializable = onSurvivor.getKVClient()
          .get(bytes("/launcher/before"), GetOption.builder().withSerializable(true).build())
          .get(10, TimeUnit.SECONDS);
      assertThat(serializable.getKvs()).singleElement().satisfies(kv -> assertThat(string(kv.getValue())).isEqualTo("kept"));
    }

    etcd.bringBackAll();
    try (Client all = Clients.to(etcd.endpoints())) {
      all.getKVClient().put(bytes("/launcher/after"), bytes("written")).get(10, TimeUnit.SECONDS);
      GetResponse before = all.getKVClient().get(bytes("/launcher/before")).get(10, TimeUnit.SECONDS);
      assertThat(before.getKvs()).singleElement().satisfies(kv -> assertThat(string(kv.getValue())).isEqualTo("kept"));
    }
  }

  @Test
  void killingTheLeaderElectsAnotherAndWritesGoOn() throws Exception {
    EtcdMember first = etcd.killLeader();
    assertThat(first.isRunning()).isFalse();
    EtcdMember second = etcd.awaitLeader(Duration.ofSeconds(20));
    assertThat(second).isNotSameAs(first);
    try (Client all = Clients.to(etcd.endpoints())) {
      all.getKVClient().put(bytes("/launcher/leader"), bytes("x")).get(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void compactionToTheCurrentRevisionMakesOlderRevisionsUnreadable() throws Exception {
    try (Client all = Clients.to(etcd.endpoints())) {
      long old = all.getKVClient().put(bytes("/launcher/c"), bytes("1")).get(10, TimeUnit.SECONDS)
          .getHeader().getRevision();
      all.getKVClient().put(bytes("/launcher/c"), bytes("2")).get(10, TimeUnit.SECONDS);
      long compacted = etcd.compact();
      assertThat(compacted).isGreaterThan(old);
      assertThatThrownBy(() -> all.getKVClient()
          .get(bytes("/launcher/c"), GetOption.builder().withRevision(old).build()).get(10, TimeUnit.SECONDS))
          .hasMessageContaining("compacted");
    }
  }
}
