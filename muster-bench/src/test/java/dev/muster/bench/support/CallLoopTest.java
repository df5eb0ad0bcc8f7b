package dev.muster.bench.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class CallLoopTest {
  @Test
  @Timeout(30)
  void countsTheCallsThatStartedInAWindowAndWhyTheyFailed() {
    AtomicInteger n = new AtomicInteger();
    try (CallLoop loop = new CallLoop(Duration.ofMillis(5), () -> n.incrementAndGet() % 4 == 0 ? "refused" : null)) {
      long from = System.nanoTime();
      loop.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> n.get() >= 40);
      long to = System.nanoTime();
      List<CallLoop.Call> calls = loop.calls(from, to);
      assertThat(calls).hasSizeGreaterThanOrEqualTo(39);
      assertThat(CallLoop.failed(calls)).isEqualTo(calls.stream().filter(c -> c.failure() != null).count())
          .isGreaterThanOrEqualTo(9);
      assertThat(CallLoop.failuresByReason(calls)).containsOnlyKeys("refused");
      assertThat(loop.calls(to + 1, to + 2)).isEmpty();
    }
  }

  @Test
  @Timeout(30)
  void successesInARowResetOnAFailure() {
    AtomicInteger n = new AtomicInteger();
    try (CallLoop loop = new CallLoop(Duration.ofMillis(1), () -> n.incrementAndGet() == 5 ? "timeout" : null)) {
      long from = System.nanoTime();
      loop.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> n.get() >= 12);
      assertThat(loop.successesInARow()).isGreaterThanOrEqualTo(7);
      assertThat(CallLoop.failuresByReason(loop.calls(from, System.nanoTime()))).containsEntry("timeout", 1);
    }
  }
}
