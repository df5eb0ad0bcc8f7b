package dev.muster.cache.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.Endpoints;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Closing a cache waits a bounded time for its loop to cancel the watch. An interrupt must end that wait without
 * being swallowed: the caller (a shutdown that interrupts its workers) still sees its flag. No registry is needed:
 * the cache's I/O fails every range, as against a closed port (the test ran so on etcd before the runtime moved to
 * muster-core), and the cache only has to close.
 */
class LiveCacheCloseTest {
  @Test
  @Timeout(30)
  void closingFromAnInterruptedThreadClosesTheCacheAndKeepsTheInterruptFlag() {
    ScriptedIo io = new ScriptedIo(Collections.synchronizedList(new ArrayList<>()))
        .willFailRange("connection refused");
    try {
      AtomicInteger onClosed = new AtomicInteger();
      LiveCache cache = LiveCache.start(Endpoints.LAYOUT, CacheConfig.builder("orders").build(),
          (prefix, loop) -> io, CacheDriver.ResumeRule.AT_CHECKPOINT, Clock.systemUTC(), null, List.of(),
          c -> onClosed.incrementAndGet());

      Thread.currentThread().interrupt();
      cache.close();
      boolean stillInterrupted = Thread.interrupted(); // read and clear

      assertThat(stillInterrupted).as("the interrupt flag after close()").isTrue();
      assertThat(onClosed).hasValue(1);
      assertThatThrownBy(() -> cache.addListener(new EndpointListener() {
        @Override
        public void onChange(EndpointSet set, EndpointDelta delta) {}
      })).isInstanceOf(IllegalStateException.class);
    } finally {
      Thread.interrupted();
    }
  }
}
