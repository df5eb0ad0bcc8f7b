package dev.muster.cache;

import static dev.muster.cache.Endpoints.trickyName;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KeyPathOrderTest {
  private static InstanceKey key(Random random) {
    return new InstanceKey(trickyName(random), trickyName(random), trickyName(random), trickyName(random));
  }

  @Test
  void comparesKeysExactlyAsTheirPathStringsCompare() {
    Random random = new Random(20261129L);
    List<InstanceKey> keys = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      keys.add(key(random));
    }
    for (InstanceKey a : keys) {
      for (InstanceKey b : keys) {
        int expected = Integer.signum(a.path().compareTo(b.path()));
        assertThat(Integer.signum(KeyPathOrder.INSTANCE.compare(a, b)))
            .as("%s vs %s", a.path(), b.path())
            .isEqualTo(expected);
        assertThat(KeyPathOrder.INSTANCE.compare(a, b) == 0).isEqualTo(a.equals(b));
      }
    }
  }

  /** The tree compares instances, and keys against instances: the same order from the instances' own fields. */
  @Test
  void ordersInstancesAndKeysAgainstInstancesAsTheirPathsCompare() {
    Random random = new Random(20261203L);
    List<Instance> instances = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      InstanceKey k = key(random);
      instances.add(Instance.of(k.service(), "10.0.0.7", 8080).id(k.id()).namespace(k.namespace())
          .version(k.version()));
    }
    for (Instance a : instances) {
      for (Instance b : instances) {
        int expected = Integer.signum(a.key().path().compareTo(b.key().path()));
        assertThat(Integer.signum(KeyPathOrder.compare(a, b))).as("%s vs %s", a.key(), b.key()).isEqualTo(expected);
        assertThat(Integer.signum(KeyPathOrder.compare(a.key(), b))).as("%s vs %s", a.key(), b.key())
            .isEqualTo(expected);
      }
    }
  }

  @Test
  void aShorterSegmentFollowedByTheSeparatorSortsAfterALongerOneWithADash() {
    InstanceKey v1 = new InstanceKey("default", "orders", "v1", "a");
    InstanceKey v1rc = new InstanceKey("default", "orders", "v1-rc", "a");
    InstanceKey idA = new InstanceKey("default", "orders", "v1", "a-b");

    assertThat(KeyPathOrder.INSTANCE.compare(v1rc, v1)).isNegative();
    assertThat(KeyPathOrder.INSTANCE.compare(v1, idA)).isNegative(); // the last segment simply ends
  }
}
