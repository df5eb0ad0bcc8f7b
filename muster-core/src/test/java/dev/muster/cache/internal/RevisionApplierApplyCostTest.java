package dev.muster.cache.internal;

import static dev.muster.cache.Endpoints.LAYOUT;
import static dev.muster.cache.Endpoints.PREFIX;
import static dev.muster.cache.Endpoints.instance;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.cache.EndpointDelta;
import dev.muster.registry.InstanceCodec;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Applying a revision costs O(changed), not O(set size) (issue 7): one PUT allocates about the same at 100 and at
 * 10,000 instances. Counted in bytes allocated by this thread, which does not depend on the machine's speed; the
 * bounds are generous (a one-PUT apply allocates ~9 KB, nearly all of it decoding the value; copying the set's
 * map, as apply once did, allocated ~397 KB at 10,000).
 */
class RevisionApplierApplyCostTest {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private static final int APPLIES = 200;

  @Test
  void onePutAllocatesAboutTheSameAtAHundredAndAtTenThousandInstances() {
    long small = bytesPerOnePutApply(100);
    long large = bytesPerOnePutApply(10_000);

    assertThat(large).isLessThan(64 * 1024);
    assertThat(large).isLessThan(2 * small + 4 * 1024);
  }

  /** Average bytes allocated by one apply of one PUT to a view of {@code size} instances. */
  private static long bytesPerOnePutApply(int size) {
    RevisionApplier view = new RevisionApplier(LAYOUT, PREFIX);
    List<CacheRecord> snapshot = new ArrayList<>(size);
    byte[][] values = new byte[size][];
    byte[][] changed = new byte[size][];
    String[] keys = new String[size];
    for (int i = 0; i < size; i++) {
      keys[i] = LAYOUT.instanceKey(instance("i" + i));
      values[i] = InstanceCodec.encode(instance("i" + i));
      changed[i] = InstanceCodec.encode(instance("i" + i).weight(50));
      snapshot.add(CacheRecord.put(keys[i], values[i], 1));
    }
    view.replace(1, snapshot, EndpointDelta.Kind.SNAPSHOT);
    long revision = 1;
    long allocated = 0;
    for (int round = 0; round < 2; round++) { // the first round warms up, the second is counted
      long before = THREADS.getCurrentThreadAllocatedBytes();
      for (int n = 0; n < APPLIES; n++) {
        int i = n % size;
        revision++;
        byte[] value = (revision % 2 == 0) ? changed[i] : values[i];
        assertThat(view.apply(revision, List.of(CacheRecord.put(keys[i], value, revision)))).isPresent();
      }
      allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    }
    return allocated / APPLIES;
  }
}
