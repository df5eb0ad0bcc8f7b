package dev.muster.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.testing.internal.FreePorts;
import dev.muster.testing.internal.ProcessReaper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class EtcdClusterStartIT {

  @Test
  void aStartThatTimesOutHalfWayKillsEveryProcessItStartedAndRemovesItsDirectories() {
    Set<Long> before = new HashSet<>(ProcessReaper.everStarted());
    EtcdCluster cluster = EtcdCluster.builder().members(3).startTimeout(Duration.ofMillis(1)).build();

    assertThatThrownBy(cluster::start).isInstanceOf(EtcdLaunchException.class)
        .hasMessageContaining("was not healthy within");

    Set<Long> started = new HashSet<>(ProcessReaper.everStarted());
    started.removeAll(before);
    assertThat(started).hasSize(3);
    assertThat(started).allSatisfy(pid -> assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty());
    assertThat(cluster.baseDir()).isNull();
  }

  @Test
  void aMemberThatExitsAtStartIsReportedWithItsLogTail() {
    EtcdCluster cluster = EtcdCluster.builder().members(1).extraArgs(List.of("--no-such-flag")).build();
    assertThatThrownBy(cluster::start).isInstanceOf(EtcdLaunchException.class)
        .hasMessageContaining("etcd member m0 exited during start")
        .hasMessageContaining("no-such-flag");
    assertThat(ProcessReaper.stillAlive()).isEmpty();
  }

  @Test
  void aTakenFixedPortIsRefusedBeforeAnythingStarts() throws IOException {
    try (ServerSocket taken = new ServerSocket()) {
      taken.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      EtcdCluster cluster = EtcdCluster.builder().clientPort(taken.getLocalPort()).build();
      assertThatThrownBy(cluster::start).isInstanceOf(EtcdLaunchException.class)
          .hasMessageContaining("port " + taken.getLocalPort() + " on 127.0.0.1 is in use");
    }
  }

  @Test
  void aPersistentDataDirectoryKeepsItsPortsAndDataAcrossTwoStarts(@TempDir Path dir) {
    int port;
    try (EtcdCluster first = EtcdCluster.builder().members(3).dataDir(dir).build().start()) {
      port = first.member(0).clientPort();
    }
    assertThat(Files.exists(dir.resolve("muster-etcd.properties"))).isTrue();
    assertThat(Files.isDirectory(dir.resolve("m2/data/member"))).isTrue();
    try (EtcdCluster again = EtcdCluster.builder().members(3).dataDir(dir).build().start()) {
      assertThat(again.member(0).clientPort()).isEqualTo(port);
    }
    assertThatThrownBy(() -> EtcdCluster.builder().members(1).dataDir(dir).build().start())
        .hasMessageContaining("holds a 3-member cluster");
  }

  @Test
  void badBuilderValuesAreRefusedWithTheValueInTheMessage() {
    assertThatThrownBy(() -> EtcdCluster.builder().members(0).build()).hasMessageContaining("members is 0");
    assertThatThrownBy(() -> EtcdCluster.builder().clientPort(65530).members(3).build())
        .hasMessageContaining("clientPort is 65530");
    assertThatThrownBy(() -> EtcdCluster.builder().startTimeout(Duration.ZERO).build())
        .hasMessageContaining("startTimeout");
    assertThat(FreePorts.pick()).isPositive();
  }
}
