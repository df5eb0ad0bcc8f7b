package dev.muster.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.util.BufferRecycler;
import com.fasterxml.jackson.core.util.RecyclerPool;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import org.junit.jupiter.api.Test;

class JsonTest {
  /**
   * Jackson's default keeps one set of buffers per thread for the thread's life (about 18 KB for each registration's
   * thread); the shared pool hands the same buffers from thread to thread, so threads that encode one after another
   * leave a set or two in the pool, not one each.
   */
  @Test
  void threadsThatEncodeOneAfterAnotherShareJacksonsBuffersInsteadOfKeepingASetEach() throws InterruptedException {
    RecyclerPool<BufferRecycler> pool = Json.MAPPER.getFactory()._getRecyclerPool();
    int threads = 16;
    for (int i = 0; i < threads; i++) {
      Instance instance = Instance.of("orders", "10.0.0." + (i + 1), 8080).id("i" + i);
      Thread t = new Thread(() -> InstanceCodec.encode(instance), "encode-" + i);
      t.start();
      t.join();
    }

    assertThat(pool.pooledCount()).as("buffer sets held by the pool (-1: a per-thread pool that does not count)")
        .isPositive().isLessThan(threads);
  }
}
