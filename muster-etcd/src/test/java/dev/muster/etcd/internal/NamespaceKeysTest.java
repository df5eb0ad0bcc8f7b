package dev.muster.etcd.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The service directory's bookkeeping: a service is there from its first key to its last. */
class NamespaceKeysTest {
  private final NamespaceKeys<String> keys = new NamespaceKeys<>("/muster/", (ns, svc) -> ns + "/" + svc);

  @Test
  void aServiceAppearsWithItsFirstKeyAndLeavesWithItsLast() {
    assertThat(keys.put("/muster/default/orders/v1/a")).as("first key: a new service").isTrue();
    assertThat(keys.put("/muster/default/orders/v2/b")).as("a second key of it").isFalse();
    assertThat(keys.put("/muster/default/orders/v1/a")).as("the same key again (an update)").isFalse();
    assertThat(keys.services()).containsExactly("default/orders");

    assertThat(keys.delete("/muster/default/orders/v1/a")).isFalse();
    assertThat(keys.delete("/muster/default/orders/v1/a")).as("a key not held").isFalse();
    assertThat(keys.delete("/muster/default/orders/v2/b")).as("its last key").isTrue();
    assertThat(keys.services()).isEmpty();
  }

  @Test
  void keysOutsideTheLayoutOrWithBadNamesAreIgnored() {
    assertThat(keys.put("/other/default/orders/v1/a")).isFalse();
    assertThat(keys.put("/muster/default/orders")).as("no segment after the service").isFalse();
    assertThat(keys.put("/muster/Bad Name/orders/v1/a")).isFalse();
    assertThat(keys.services()).isEmpty();
  }

  @Test
  void aResetHoldsExactlyTheListing() {
    keys.put("/muster/default/gone/v1/a");
    keys.reset(List.of("/muster/default/orders/v1/a", "/muster/eu/users/v1/u", "/muster/eu/users/v1/v"));

    assertThat(keys.services()).containsExactlyInAnyOrder("default/orders", "eu/users");
    assertThat(keys.delete("/muster/eu/users/v1/u")).isFalse();
    assertThat(keys.delete("/muster/eu/users/v1/v")).isTrue();
  }
}
