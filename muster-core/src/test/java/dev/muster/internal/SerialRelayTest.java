package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

class SerialRelayTest {
  /**
   * The prober's and the balancer's shape: a number decided under a lock, delivered after it is released, with
   * the thread sometimes descheduled in between. The consumer must see 1, 2, 3, ... and never two at once.
   */
  @Test
  void deliversInTheOrderAddedOneAtATimeWhateverTheThreadsDoBetweenAddAndDrain() throws Exception {
    int threads = 4;
    int each = 20_000;
    ReentrantLock lock = new ReentrantLock();
    AtomicInteger inside = new AtomicInteger();
    List<String> problems = new ArrayList<>();
    int[] expected = {1};
    int[] next = {0};
    SerialRelay<Integer> relay = new SerialRelay<>(n -> {
      if (inside.incrementAndGet() != 1) {
        problems.add("two deliveries at once, at " + n);
      }
      if (n != expected[0]) {
        problems.add("got " + n + ", expected " + expected[0]);
      }
      expected[0] = n + 1;
      inside.decrementAndGet();
    });
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> started = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread thread = new Thread(() -> {
        try {
          go.await();
        } catch (InterruptedException e) {
          return;
        }
        for (int i = 0; i < each; i++) {
          lock.lock();
          try {
            relay.add(++next[0]);
          } finally {
            lock.unlock();
          }
          if (ThreadLocalRandom.current().nextInt(8) == 0) {
            Thread.yield(); // descheduled between the decision and its delivery
          }
          relay.drain();
        }
      });
      thread.start();
      started.add(thread);
    }
    go.countDown();
    for (Thread thread : started) {
      thread.join(TimeUnit.MINUTES.toMillis(1));
      assertThat(thread.isAlive()).isFalse();
    }

    synchronized (problems) {
      assertThat(problems).isEmpty();
    }
    assertThat(expected[0]).as("every item delivered by the drains themselves").isEqualTo(threads * each + 1);
  }

  @Test
  void anItemAddedByTheConsumerIsDeliveredAfterTheCurrentOneNotInsideIt() {
    List<String> seen = new ArrayList<>();
    SerialRelay<String>[] relay = new SerialRelay[1];
    relay[0] = new SerialRelay<>(s -> {
      seen.add("start " + s);
      if (s.equals("cause")) {
        relay[0].add("effect");
        relay[0].drain();
      }
      seen.add("end " + s);
    });

    relay[0].add("cause");
    relay[0].drain();

    assertThat(seen).containsExactly("start cause", "end cause", "start effect", "end effect");
  }

  @Test
  void aConsumerThatThrowsLeavesTheRestForTheNextDrain() {
    List<String> seen = new ArrayList<>();
    SerialRelay<String> relay = new SerialRelay<>(s -> {
      if (s.equals("bad")) {
        throw new IllegalStateException("listener bug");
      }
      seen.add(s);
    });
    relay.add("a");
    relay.add("bad");
    relay.add("b");

    assertThatThrownBy(relay::drain).hasMessage("listener bug");
    relay.drain();

    assertThat(seen).containsExactly("a", "b");
  }
}
