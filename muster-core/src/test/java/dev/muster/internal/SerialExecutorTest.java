package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The serial executor's contract (its class comment): order, one task at a time, a caller running its task on an
 * idle executor, queueing on a busy one, reentrance that queues instead of deadlocking, and happens-before between
 * consecutive tasks whichever threads run them. All but the last on a fake pool that only collects what it is lent.
 */
class SerialExecutorTest {
  /** A pool that runs nothing until the test says so. */
  private static final class FakePool implements java.util.concurrent.Executor {
    final List<Runnable> lent = new ArrayList<>();
    boolean refuse;

    @Override
    public void execute(Runnable r) {
      if (refuse) {
        throw new RejectedExecutionException("refused by the test");
      }
      lent.add(r);
    }

    void runNext() {
      lent.remove(0).run();
    }
  }

  private final FakePool pool = new FakePool();
  private final SerialExecutor serial = new SerialExecutor(pool);
  private final List<String> ran = new ArrayList<>();

  @Test
  void runsTasksInSubmissionOrderWithOneDrainHandedToThePool() {
    serial.execute(() -> ran.add("a"));
    serial.execute(() -> ran.add("b"));
    serial.execute(() -> ran.add("c"));

    assertThat(ran).isEmpty();
    assertThat(pool.lent).as("one drain for the three").hasSize(1);
    pool.runNext();
    assertThat(ran).containsExactly("a", "b", "c");
    assertThat(pool.lent).isEmpty();
  }

  @Test
  void aTaskQueuedAfterTheDrainWentIdleGetsANewDrain() {
    serial.execute(() -> ran.add("a"));
    pool.runNext();
    serial.execute(() -> ran.add("b"));

    assertThat(pool.lent).hasSize(1);
    pool.runNext();
    assertThat(ran).containsExactly("a", "b");
  }

  @Test
  void aTaskQueuedByTheRunningTaskRunsAfterItInTheSameDrain() {
    serial.execute(() -> {
      serial.execute(() -> ran.add("inner"));
      ran.add("outer");
    });
    pool.runNext();

    assertThat(ran).containsExactly("outer", "inner");
    assertThat(pool.lent).isEmpty();
  }

  @Test
  void runOrQueueOnAnIdleExecutorRunsTheTaskOnTheCallersThreadBeforeReturning() {
    Thread[] on = new Thread[1];

    boolean here = serial.runOrQueue(() -> on[0] = Thread.currentThread());

    assertThat(here).isTrue();
    assertThat(on[0]).isSameAs(Thread.currentThread());
    assertThat(pool.lent).as("nothing handed to the pool").isEmpty();
    serial.execute(() -> ran.add("next"));
    assertThat(pool.lent).as("idle again after the caller's task").hasSize(1);
  }

  @Test
  void runOrQueueOnAnExecutorWithADrainPendingQueuesBehindIt() {
    serial.execute(() -> ran.add("a"));

    boolean here = serial.runOrQueue(() -> ran.add("b"));

    assertThat(here).isFalse();
    assertThat(ran).isEmpty();
    pool.runNext();
    assertThat(ran).containsExactly("a", "b");
  }

  @Test
  void tasksSubmittedWhileACallerHoldsThePermitQueueAndGoToThePoolWhenItReturns() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch submitted = new CountDownLatch(1);
    boolean[] othersRanHere = new boolean[2];
    Thread caller = new Thread(() -> serial.runOrQueue(() -> {
      inside.countDown();
      await(submitted);
      ran.add("caller's");
    }));
    caller.start();
    inside.await();
    othersRanHere[0] = serial.runOrQueue(() -> ran.add("another caller's"));
    serial.execute(() -> ran.add("executed"));
    submitted.countDown();
    caller.join();

    assertThat(othersRanHere[0]).as("busy: queued, not run").isFalse();
    assertThat(ran).containsExactly("caller's");
    assertThat(pool.lent).as("handed on when the caller released the permit").hasSize(1);
    pool.runNext();
    assertThat(ran).containsExactly("caller's", "another caller's", "executed");
  }

  @Test
  void runOrQueueFromInsideARunningTaskQueuesInsteadOfDeadlocking() {
    boolean[] innerHere = new boolean[1];

    boolean here = serial.runOrQueue(() -> {
      assertThat(serial.inTask()).isTrue();
      innerHere[0] = serial.runOrQueue(() -> ran.add("inner"));
      ran.add("outer");
    });

    assertThat(here).isTrue();
    assertThat(innerHere[0]).isFalse();
    assertThat(serial.inTask()).isFalse();
    assertThat(ran).containsExactly("outer");
    pool.runNext();
    assertThat(ran).containsExactly("outer", "inner");
  }

  @Test
  void runOrQueueFromATaskOnAPoolThreadQueuesToo() {
    boolean[] innerHere = new boolean[1];
    serial.execute(() -> {
      innerHere[0] = serial.runOrQueue(() -> ran.add("inner"));
      ran.add("outer");
    });

    pool.runNext();

    assertThat(innerHere[0]).isFalse();
    assertThat(ran).containsExactly("outer", "inner");
  }

  @Test
  void aTaskThatThrowsIsLoggedAndTheNextRuns() {
    serial.execute(() -> {
      throw new IllegalStateException("thrown by the test");
    });
    serial.execute(() -> ran.add("next"));
    pool.runNext();

    assertThat(ran).containsExactly("next");
    assertThat(serial.runOrQueue(() -> {
      throw new IllegalStateException("thrown by the test, on the caller");
    })).isTrue();
    assertThat(serial.runOrQueue(() -> ran.add("after"))).as("the permit was released").isTrue();
  }

  @Test
  void aPoolThatRefusesLeavesTheExecutorIdleAndTheTaskQueuedForTheNextSubmission() {
    pool.refuse = true;
    assertThatThrownBy(() -> serial.execute(() -> ran.add("a"))).isInstanceOf(RejectedExecutionException.class);
    pool.refuse = false;

    serial.execute(() -> ran.add("b"));
    pool.runNext();

    assertThat(ran).containsExactly("a", "b");
  }

  /**
   * Happens-before on real threads: each task reads a plain field the task before it wrote, whichever thread ran
   * it (a caller in runOrQueue or a pool thread). 10,000 interleavings of three submitters, each submitting three
   * tasks by execute or runOrQueue at random, with random spins between, over a two-thread pool. Every task must
   * see the count of those before it, none may overlap another, and each submitter's tasks run in its order.
   */
  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  void eachTaskSeesTheWritesOfTheOneBeforeItOverManyRandomInterleavings() throws Exception {
    int rounds = 10_000;
    int submitters = 3;
    int each = 3;
    ExecutorService lent = Executors.newFixedThreadPool(2);
    ExecutorService callers = Executors.newFixedThreadPool(submitters);
    List<String> problems = new ArrayList<>();
    AtomicInteger onCallers = new AtomicInteger();
    AtomicInteger queuedByRunOrQueue = new AtomicInteger();
    try {
      SplittableRandom seeds = new SplittableRandom(33);
      for (int round = 0; round < rounds && problems.isEmpty(); round++) {
        SerialExecutor executor = new SerialExecutor(lent);
        Steps steps = new Steps(submitters);
        AtomicInteger inside = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(submitters * each);
        CountDownLatch go = new CountDownLatch(1);
        List<String> roundProblems = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int s = 0; s < submitters; s++) {
          int submitter = s;
          SplittableRandom random = seeds.split();
          callers.execute(() -> {
            await(go);
            for (int i = 0; i < each; i++) {
              int nth = i;
              Runnable task = () -> {
                if (inside.incrementAndGet() != 1) {
                  roundProblems.add("two tasks at once");
                }
                steps.step(submitter, nth, roundProblems);
                inside.decrementAndGet();
                done.countDown();
              };
              if (random.nextBoolean()) {
                executor.execute(task);
              } else if (executor.runOrQueue(task)) {
                onCallers.incrementAndGet();
              } else {
                queuedByRunOrQueue.incrementAndGet();
              }
              spin(random.nextInt(200));
            }
          });
        }
        go.countDown();
        if (!done.await(30, TimeUnit.SECONDS)) {
          roundProblems.add("not all tasks ran within 30 s: " + executor);
        }
        if (steps.count != submitters * each) {
          roundProblems.add("the last task saw " + steps.count + " steps, expected " + submitters * each);
        }
        if (!roundProblems.isEmpty()) {
          problems.add("round " + round + ": " + roundProblems);
        }
      }
    } finally {
      callers.shutdownNow();
      lent.shutdownNow();
    }
    assertThat(problems).isEmpty();
    assertThat(onCallers).as("some tasks ran on their callers").hasPositiveValue();
    assertThat(queuedByRunOrQueue).as("some callers found the executor busy").hasPositiveValue();
  }

  /** Plain fields, written by one task and read by the next: only the executor's edges make them visible. */
  private static final class Steps {
    int count;
    final int[] nextOf;

    Steps(int submitters) {
      nextOf = new int[submitters];
    }

    void step(int submitter, int nth, List<String> problems) {
      if (nextOf[submitter] != nth) {
        problems.add("submitter " + submitter + "'s task " + nth + " ran when " + nextOf[submitter] + " was due");
      }
      nextOf[submitter] = nth + 1;
      count++;
    }
  }

  private static void spin(int n) {
    long x = 0;
    for (int i = 0; i < n; i++) {
      x += i * 31L;
    }
    if (x == 42) {
      Thread.onSpinWait();
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
