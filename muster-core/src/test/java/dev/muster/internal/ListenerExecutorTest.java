package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The hand-over rules of {@link ListenerExecutor}, with a pool that only records what it is given. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ListenerExecutorTest {
  private final List<Runnable> pool = new ArrayList<>();

  private void runPool() {
    new ArrayList<>(pool).forEach(Runnable::run);
    pool.clear();
  }

  @Test
  void aRefusedWorkerRunsOnThePoolAndSoDoesEveryLaterOne() {
    AtomicInteger offered = new AtomicInteger();
    ListenerExecutor e = new ListenerExecutor(task -> {
      offered.incrementAndGet();
      throw new java.util.concurrent.RejectedExecutionException("shut down");
    }, pool::add, "orders");
    AtomicInteger ran = new AtomicInteger();

    e.execute(ran::incrementAndGet);
    e.execute(ran::incrementAndGet);
    runPool();

    assertThat(ran).hasValue(2);
    assertThat(offered).as("the user's executor is not asked again once it refused").hasValue(1);
  }

  @Test
  void aWorkerThatShutdownNowDroppedRunsOnThePoolOnceAndOnlyThen() throws Exception {
    ThreadPoolExecutor user = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    ListenerExecutor e = new ListenerExecutor(user, pool::add, "orders");
    CountDownLatch holding = new CountDownLatch(1);
    user.execute(() -> {
      holding.countDown();
      holdUntilInterrupted();
    });
    assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
    AtomicInteger ran = new AtomicInteger();
    e.execute(ran::incrementAndGet); // queued behind the application's task

    e.rescueDropped();
    assertThat(pool).as("not terminated yet: nothing to rescue").isEmpty();
    assertThat(user.shutdownNow()).hasSize(1);
    assertThat(user.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    e.rescueDropped();
    e.rescueDropped();
    runPool();

    assertThat(ran).hasValue(1);
  }

  @Test
  void aWorkerTheUsersExecutorRanIsNeverRescued() throws Exception {
    ThreadPoolExecutor user = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>());
    ListenerExecutor e = new ListenerExecutor(user, pool::add, "orders");
    AtomicInteger ran = new AtomicInteger();
    e.execute(ran::incrementAndGet);
    user.shutdown();
    assertThat(user.awaitTermination(10, TimeUnit.SECONDS)).isTrue();

    e.rescueDropped();

    assertThat(pool).isEmpty();
    assertThat(ran).hasValue(1);
  }

  private static void holdUntilInterrupted() {
    try {
      new CountDownLatch(1).await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
