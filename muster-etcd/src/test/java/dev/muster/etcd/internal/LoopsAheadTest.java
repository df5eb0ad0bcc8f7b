package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LoopsAheadTest {
  private final LoopsAhead loops = new LoopsAhead();
  private ScheduledExecutorService taken;

  @AfterEach
  void stop() {
    if (taken != null) {
      taken.shutdownNow();
    }
    loops.close();
  }

  private static Thread threadOf(ScheduledExecutorService loop) throws Exception {
    return loop.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
  }

  private static Thread liveThreadNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).findFirst()
        .orElse(null);
  }

  @Test
  void withoutASpareTakeStartsItsOwnLoopUnderTheGivenName() throws Exception {
    taken = loops.take("muster-registrar-a");

    Thread t = threadOf(taken);
    assertThat(t.getName()).isEqualTo("muster-registrar-a");
    assertThat(t.isDaemon()).isTrue();
  }

  @Test
  void aRefilledSpareIsRunningBeforeItIsTakenAndTakesTheRegistrationsName() throws Exception {
    loops.refill();
    assertThat(loops.hasSpare()).isTrue();
    Thread started = liveThreadNamed("muster-registrar-spare-");
    assertThat(started).as("the spare's thread runs before anyone takes it").isNotNull();

    taken = loops.take("muster-registrar-b");

    assertThat(threadOf(taken)).isSameAs(started);
    assertThat(started.getName()).isEqualTo("muster-registrar-b");
    assertThat(loops.hasSpare()).isFalse();
  }

  @Test
  void aSecondRefillKeepsOneSpare() {
    loops.refill();
    loops.refill();

    assertThat(Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("muster-registrar-spare-")).count()).isEqualTo(1);
  }

  @Test
  void closeStopsTheSpareAndLaterRefillsStartNoThread() throws Exception {
    loops.refill();
    Thread spare = liveThreadNamed("muster-registrar-spare-");

    loops.close();
    spare.join(5_000);
    loops.refill();

    assertThat(spare.isAlive()).isFalse();
    assertThat(loops.hasSpare()).isFalse();
    assertThat(liveThreadNamed("muster-registrar-spare-")).isNull();
    taken = loops.take("muster-registrar-c"); // a registration still gets a loop of its own
    assertThat(threadOf(taken).getName()).isEqualTo("muster-registrar-c");
  }
}
