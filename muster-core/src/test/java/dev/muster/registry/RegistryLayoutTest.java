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

  @Test
  void parsesKeysExactlyAsSplittingOnSlashesDid() {
    java.util.SplittableRandom random = new java.util.SplittableRandom(19);
    String alphabet = "/abz09-A_.";
    RegistryLayout custom = new RegistryLayout("lab-7");
    List<String> seeds = List.of("/muster/default/orders/v1/orders-8080-3f2a1c", "/lab-7/n/s/v/i", "/muster/a/b/c/d",
        "/muster/", "/muster", "/musterx/a/b/c/d", "muster/a/b/c/d", "");
    for (int i = 0; i < 50_000; i++) {
      StringBuilder key = new StringBuilder(seeds.get(random.nextInt(seeds.size())));
      for (int e = random.nextInt(3); e > 0; e--) {
        int at = key.length() == 0 ? 0 : random.nextInt(key.length() + 1);
        char c = alphabet.charAt(random.nextInt(alphabet.length()));
        if (random.nextBoolean() || key.length() == 0 || at == key.length()) {
          key.insert(at, c);
        } else {
          key.setCharAt(at, c);
        }
      }
      for (RegistryLayout l : List.of(layout, custom)) {
        assertThat(outcome(() -> l.parseKey(key.toString()).toString()))
            .as("%s in %s", key, l.root()).isEqualTo(outcome(() -> splitting(l, key.toString()).toString()));
      }
    }
    assertThat(outcome(() -> layout.parseKey(null).toString())).isEqualTo(outcome(() -> splitting(layout, null)
        .toString()));
  }

  private static String outcome(java.util.function.Supplier<String> parse) {
    try {
      return "ok " + parse.get();
    } catch (InvalidInputException e) {
      return "error " + e.getMessage();
    }
  }

  /** The former parseKey, verbatim, as the oracle. */
  private static InstanceKey splitting(RegistryLayout layout, String key) {
    String expected = "expected " + layout.rootPrefix() + "{namespace}/{service}/{version}/{instanceId}";
    if (key == null || key.isEmpty() || !key.startsWith(layout.rootPrefix())) {
      throw new InvalidInputException("key", key, expected);
    }
    String[] parts = key.substring(layout.rootPrefix().length()).split("/", -1);
    if (parts.length != 4) {
      throw new InvalidInputException("key", key, expected);
    }
    String[] fields = {"namespace", "service", "version", "instance id"};
    for (int i = 0; i < parts.length; i++) {
      if (!Names.isValid(parts[i])) {
        String part = parts[i].isEmpty() ? "is empty" : "\"" + parts[i] + "\" is not a valid name";
        throw new InvalidInputException("key", key, "its " + fields[i] + " part " + part + "; " + Names.RULE);
      }
    }
    return new InstanceKey(parts[0], parts[1], parts[2], parts[3]);
  }
}
