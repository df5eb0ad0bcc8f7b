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
    List<CallLoop.Call> calls;
    long from = System.nanoTime();
    // every fourth call fails: calls 4, 8, 12, ...
    try (CallLoop loop = new CallLoop(Duration.ofMillis(5), () -> n.incrementAndGet() % 4 == 0 ? "refused" : null)) {
      loop.start();
      await().atMost(Duration.ofSeconds(20)).until(() -> n.get() >= 40);
      calls = loop.calls(from, System.nanoTime());
      assertThat(calls).hasSizeGreaterThanOrEqualTo(39);
      for (int i = 0; i < calls.size(); i++) {
        assertThat(calls.get(i).failure()).as("call %d", i + 1).isEqualTo((i + 1) % 4 == 0 ? "refused" : null);
      }
      assertThat(CallLoop.failed(calls)).isEqualTo(calls.size() / 4);
      assertThat(CallLoop.failuresByReason(calls)).isEqualTo(java.util.Map.of("refused", calls.size() / 4));

      // [from, the 10th call's start): the first 9 calls, two of which (4 and 8) failed
      List<CallLoop.Call> firstNine = loop.calls(from, calls.get(9).startedAt());
      assertThat(firstNine).containsExactlyElementsOf(calls.subList(0, 9));
      assertThat(CallLoop.failed(firstNine)).isEqualTo(2);
      long last = calls.get(calls.size() - 1).startedAt();
      assertThat(loop.calls(last + 1, last + 2)).isEmpty();
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
