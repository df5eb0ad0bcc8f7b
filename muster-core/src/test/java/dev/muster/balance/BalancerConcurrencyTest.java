package dev.muster.balance;

import static dev.muster.balance.TestEndpoints.instance;
import static dev.muster.balance.TestEndpoints.set;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.outlier.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pickers on several threads while another thread keeps replacing the set and outcomes eject endpoints: nothing
 * throws, no pick returns null while the set is not empty, and every attempt's in-flight count comes back to zero.
 * Real time, bounded by counts, not by sleeping.
 */
class BalancerConcurrencyTest {
  @Test
  @Timeout(30)
  void picksUpdatesAndEjectionsRaceWithoutLosingState() throws InterruptedException {
    OutlierDetector detector = new OutlierDetector(
        OutlierConfig.builder().baseEjectionTime(Duration.ofMillis(1)).maxEjectionTime(Duration.ofMillis(5))
            .build(), System::nanoTime);
    Balancer balancer = new Balancer(BalancerConfig.defaults(), detector, System::nanoTime,
        ThreadLocalRandom::current, null);
    EndpointSet abc = set(instance("a"), instance("b"), instance("c"));
    EndpointSet abd = set(instance("a"), instance("b"), instance("d"));
    balancer.update(abc);

    ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      threads.add(new Thread(() -> {
        try {
          start.await();
          for (int i = 0; i < 50_000; i++) {
            EndpointState e = balancer.pick();
            if (e == null) {
              throw new AssertionError("null pick from a non-empty set");
            }
            e.started();
            e.finished(Duration.ofMillis(i % 7));
            detector.record(e.outlier(), i % 5 == 0 ? Outcome.LOCAL_ORIGIN_FAILURE : Outcome.SUCCESS);
          }
        } catch (Throwable e) {
          errors.add(e);
        }
      }));
    }
    threads.add(new Thread(() -> {
      try {
        start.await();
        for (int i = 0; i < 2_000; i++) {
          balancer.update(i % 2 == 0 ? abd : abc);
        }
      } catch (Throwable e) {
        errors.add(e);
      }
    }));
    threads.forEach(Thread::start);
    start.countDown();
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(25));
    }

    assertThat(errors).isEmpty();
    assertThat(balancer.endpoints()).allSatisfy(e -> assertThat(e.inFlight()).isZero());
    assertThat(detector.ejections()).isPositive();
  }
}
