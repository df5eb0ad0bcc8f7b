package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.cache.CacheConfig;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.cache.internal.CacheDriver;
import dev.muster.etcd.EtcdConfig;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Clock;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Closing a cache waits a bounded time for its loop to cancel the watch. An interrupt must end that wait without
 * being swallowed: the caller (a shutdown that interrupts its workers) still sees its flag. No etcd is needed: the
 * cache points at a closed loopback port and only has to close.
 */
class EtcdEndpointCacheCloseTest {
  @Test
  @Timeout(30)
  void closingFromAnInterruptedThreadClosesTheCacheAndKeepsTheInterruptFlag() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort(); // nothing listens there once closed: every connect is refused at once
    }
    try (EtcdConnection connection = new EtcdConnection(EtcdConfig.of("http://127.0.0.1:" + closedPort))) {
      AtomicInteger onClosed = new AtomicInteger();
      EtcdEndpointCache cache = EtcdEndpointCache.start(connection, CacheConfig.builder("orders").build(),
          CacheDriver.ResumeRule.AT_CHECKPOINT, Clock.systemUTC(), null, List.of(), c -> onClosed.incrementAndGet());

      Thread.currentThread().interrupt();
      cache.close();
      boolean stillInterrupted = Thread.interrupted(); // read and clear, so the connection's close is not disturbed

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
