package dev.muster.testing;

import static dev.muster.testing.Clients.bytes;
import static dev.muster.testing.Clients.string;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.testing.internal.ProcessReaper;
import io.etcd.jetcd.Client;
import java.nio.file.Files;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("etcd-versions") // also run on etcd 3.4.23: see the etcd-3.4 failsafe execution
class EtcdMemberIT {
  @RegisterExtension
  static EtcdCluster etcd = EtcdCluster.builder().members(1).build();

  @Test
  void aMemberKilledWithSigkillAndRestartedOnItsDataDirectoryKeepsItsData() throws Exception {
    EtcdMember m = etcd.member(0);
    try (Client c = Clients.to(m.clientUrl())) {
      c.getKVClient().put(bytes("/member/durable"), bytes("yes")).get(10, TimeUnit.SECONDS);
    }
    long oldPid = m.pid().orElseThrow();
    m.kill();
    assertThat(m.isRunning()).isFalse();
    assertThat(ProcessHandle.of(oldPid).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));

    m.restart();
    assertThat(m.pid()).isPresent().isNotEqualTo(java.util.OptionalLong.of(oldPid));
    try (Client c = Clients.to(m.clientUrl())) {
      var kvs = c.getKVClient().get(bytes("/member/durable")).get(20, TimeUnit.SECONDS).getKvs();
      assertThat(kvs).singleElement().satisfies(kv -> assertThat(string(kv.getValue())).isEqualTo("yes"));
    }
  }

  @Test
  void aPausedMemberStopsAnsweringAndAnswersAgainOnceResumed() throws Exception {
    EtcdMember m = etcd.member(0);
    try (Client c = Clients.to(m.clientUrl())) {
      c.getKVClient().put(bytes("/member/pause"), bytes("1")).get(10, TimeUnit.SECONDS);
      long pid = m.pid().orElseThrow();
      assertThat(ProcStat.of(pid).processGroup()).as("a process group of its own (ChildProcessIT says why)")
          .isEqualTo(pid);
      assertThat(ProcStat.of(pid).session()).as("a session of its own").isEqualTo(pid);
      m.pause();
      assertThat(m.isPaused()).isTrue();
      assertThatThrownBy(() -> c.getKVClient().get(bytes("/member/pause")).get(2, TimeUnit.SECONDS))
          .isInstanceOfAny(TimeoutException.class, ExecutionException.class);
      m.resume();
      assertThat(c.getKVClient().get(bytes("/member/pause")).get(20, TimeUnit.SECONDS).getKvs()).hasSize(1);
    }
  }

  /**
   * SIGSTOP is asynchronous: {@code kill} returns once the signal is queued, and the process's threads run on
   * until the thread woken to take it has stopped them all. On a loaded machine a "frozen" member answered a
   * status call made after that (EtcdMaintenanceIT, twice). pause() returns only once every thread is stopped: a
   * client keeps the member busy meanwhile, so its threads are running when each SIGSTOP arrives.
   */
  @Test
  void pauseReturnsOnlyOnceEveryThreadOfTheMemberIsStopped() throws Exception {
    EtcdMember m = etcd.member(0);
    long pid = m.pid().orElseThrow();
    java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
    try (Client c = Clients.to(m.clientUrl())) {
      Thread load = new Thread(() -> {
        while (busy.get()) {
          try {
            c.getKVClient().put(bytes("/member/busy"), bytes("1")).get(1, TimeUnit.SECONDS);
          } catch (Exception stalledWhilePaused) {
            // expected while the member is paused
          }
        }
      });
      load.start();
      try {
        for (int i = 0; i < 100; i++) {
          m.pause();
          java.util.Map<Long, ProcStat> threads = ProcStat.threads(pid);
          assertThat(threads.values()).as("pause %d: every thread of the member (tid=state: %s)", i, threads)
              .isNotEmpty().allMatch(ProcStat::stopped);
          m.resume();
          Thread.sleep(20);
        }
      } finally {
        busy.set(false);
        if (m.isPaused()) {
          m.resume();
        }
        load.join(10_000);
      }
    }
  }

  @Test
  void restartingARunningMemberIsRefusedWithAClearMessage() {
    EtcdMember m = etcd.member(0);
    assertThatThrownBy(m::restart).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("m0").hasMessageContaining("still running");
  }

  @Test
  void aGracefulStopEndsTheProcessAndTheReaperForgetsIt() {
    EtcdMember m = etcd.member(0);
    long pid = m.pid().orElseThrow();
    m.stop();
    assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
    assertThat(ProcessReaper.stillAlive()).doesNotContain(pid);
    assertThat(Files.exists(m.dataDir())).isTrue();
  }
}
