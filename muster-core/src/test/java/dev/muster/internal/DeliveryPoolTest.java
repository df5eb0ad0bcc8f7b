package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class DeliveryPoolTest {
  /**
   * Registrations blocked on etcd each get a thread (docs/design-registrations.md, "As built"): more of them than
   * the caches' pool could ever hold at once ({@code PARALLELISM + MAX_SPARES}) all block at the same time, each on
   * its own loop, under the managed-blocker rule. On the caches' pool the ones past its cap would wait for a thread
   * and this latch would never reach zero.
   */
  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void moreRegistrationsThanTheCachesPoolHoldsCanAllBlockOnEtcdAtOnce() throws Exception {
    int loops = DeliveryPool.PARALLELISM + DeliveryPool.MAX_SPARES + 10;
    CountDownLatch allBlocked = new CountDownLatch(loops);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(loops);
    List<SerialExecutor> registrations = new ArrayList<>();
    for (int i = 0; i < loops; i++) {
      SerialExecutor loop = DeliveryPool.serial();
      registrations.add(loop);
      loop.execute(() -> {
        DeliveryPool.blocking(() -> { // a keepalive waiting on etcd
          allBlocked.countDown();
          await(release);
          return null;
        });
        done.countDown();
      });
    }
    try {
      assertThat(allBlocked.await(30, TimeUnit.SECONDS)).as("all %d blocked at once", loops).isTrue();
    } finally {
      release.countDown();
    }
    assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
