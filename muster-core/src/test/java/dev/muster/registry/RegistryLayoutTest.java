package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RegistryLayoutTest {
  private final RegistryLayout layout = RegistryLayout.defaults();

  private static Instance instance(String service, String id) {
    return new Instance(id, "default", service, "v1", "10.0.0.7", 8080, InstanceState.UP, 100, null, null,
        List.of(), Map.of(), Instant.EPOCH);
  }

  @Test
  void instanceKeyIsRootNamespaceServiceVersionAndId() {
    assertThat(layout.instanceKey(instance("orders", "h-8080-abcdef")))
        .isEqualTo("/muster/default/orders/v1/h-8080-abcdef");
  }

  @Test
  void prefixesEndWithASlash() {
    assertThat(layout.rootPrefix()).isEqualTo("/muster/");
    assertThat(layout.namespacePrefix("default")).isEqualTo("/muster/default/");
    assertThat(layout.servicePrefix("default", "orders")).isEqualTo("/muster/default/orders/");
    assertThat(layout.versionPrefix("default", "orders", "v1")).isEqualTo("/muster/default/orders/v1/");
  }

  @Test
  void theServicePrefixOfApiDoesNotMatchKeysOfApiGw() {
    String apiPrefix = layout.servicePrefix("default", "api");

    assertThat(layout.instanceKey(instance("api", "a1"))).startsWith(apiPrefix);
    assertThat(layout.instanceKey(instance("api-gw", "a1"))).doesNotStartWith(apiPrefix);
  }

  @Test
  void aKeyParsesBackToTheInstanceIdentity() {
    Instance instance = instance("orders", "h-8080-abcdef").namespace("prod").version("v2");

    InstanceKey key = layout.parseKey(layout.instanceKey(instance));

    assertThat(key).isEqualTo(instance.key());
    assertThat(key).isEqualTo(new InstanceKey("prod", "orders", "v2", "h-8080-abcdef"));
  }

  @Test
  void aCustomRootIsUsedEverywhere() {
    RegistryLayout custom = new RegistryLayout("lab-7");

    assertThat(custom.instanceKey(new InstanceKey("n", "s", "v", "i"))).isEqualTo("/lab-7/n/s/v/i");
    assertThat(custom.parseKey("/lab-7/n/s/v/i")).isEqualTo(new InstanceKey("n", "s", "v", "i"));
  }

  @Test
  void rejectsAnInvalidRoot() {
    assertThatThrownBy(() -> new RegistryLayout("Muster/x"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("root \"Muster/x\" is invalid");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "muster/default/orders/v1/x", "/other/default/orders/v1/x", "/muster/default/orders/v1",
      "/muster/default/orders/v1/x/extra", "/muster/default/orders/v1/", "/muster//orders/v1/x",
      "/muster/default/Orders/v1/x", "/musterx/default/orders/v1/x"})
  void rejectsKeysThatDoNotFollowTheLayout(String key) {
    assertThatThrownBy(() -> layout.parseKey(key))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("key")
        .satisfies(e -> assertThat(((InvalidInputException) e).value()).isEqualTo(key));
  }

  @Test
  void aBadKeySegmentIsNamedInTheMessage() {
    assertThatThrownBy(() -> layout.parseKey("/muster/default/Orders/v1/x"))
        .hasMessage("key \"/muster/default/Orders/v1/x\" is invalid: its service part \"Orders\" is not a valid name;"
            + " use 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit");
  }

  @Test
  void prefixesRejectInvalidNames() {
    assertThatThrownBy(() -> layout.servicePrefix("default", "api/"))
        .hasMessageStartingWith("service \"api/\" is invalid");
  }
}
