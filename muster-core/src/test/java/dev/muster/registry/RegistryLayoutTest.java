package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
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
    Function<String, InstanceKey> defaultsParser = layout.keyParser();
    Function<String, InstanceKey> customParser = custom.keyParser();
    // Kept first, so kept whatever the mutated keys bring: every key with these segments must get these strings.
    InstanceKey defaultsFirst = defaultsParser.apply("/muster/default/orders/v1/first");
    InstanceKey customFirst = customParser.apply("/lab-7/n/s/v/first");
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
        String expected = outcome(() -> splitting(l, key.toString()).toString());
        assertThat(outcome(() -> l.parseKey(key.toString()).toString()))
            .as("%s in %s", key, l.root()).isEqualTo(expected);
        // One parser for all 50,000 keys, as a cache has: what it keeps from earlier keys changes nothing.
        Function<String, InstanceKey> parser = l == layout ? defaultsParser : customParser;
        assertThat(outcome(() -> parser.apply(key.toString()).toString()))
            .as("%s in %s, by a key parser", key, l.root()).isEqualTo(expected);
        if (expected.startsWith("ok ")) {
          assertShares(parser.apply(key.toString()), l == layout ? defaultsFirst : customFirst);
        }
      }
    }
    assertThat(outcome(() -> layout.parseKey(null).toString())).isEqualTo(outcome(() -> splitting(layout, null)
        .toString()));
    assertThat(outcome(() -> defaultsParser.apply(null).toString())).isEqualTo(outcome(() -> splitting(layout, null)
        .toString()));
  }

  @Test
  void aKeyParserGivesEveryKeyTheSameNamespaceServiceAndVersionStrings() {
    Function<String, InstanceKey> parser = layout.keyParser();

    InstanceKey first = parser.apply("/muster/prod/orders/v1/a-1");
    InstanceKey second = parser.apply("/muster/prod/orders/v2/a-2");
    InstanceKey third = parser.apply(new String("/muster/prod/orders/v1/a-3")); // a key of its own, as etcd's are

    assertThat(third).isEqualTo(new InstanceKey("prod", "orders", "v1", "a-3"));
    assertThat(third.namespace()).isSameAs(first.namespace()).isSameAs(second.namespace());
    assertThat(third.service()).isSameAs(first.service()).isSameAs(second.service());
    assertThat(third.version()).isSameAs(first.version()).isNotSameAs(second.version());
    assertThat(parser.apply("/muster/prod/orders/v2/a-4").version()).isSameAs(second.version());
    assertThat(third.id()).isNotSameAs(first.id());
  }

  @Test
  void aKeyParserSharesWhatItKeptBeforeAnInvalidKeyAndAfter() {
    Function<String, InstanceKey> parser = layout.keyParser();
    InstanceKey first = parser.apply("/muster/prod/orders/v1/a-1");

    assertThatThrownBy(() -> parser.apply("/muster/prod/orders/V9/a-2"))
        .hasMessage("key \"/muster/prod/orders/V9/a-2\" is invalid: its version part \"V9\" is not a valid name;"
            + " use 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit");
    assertThatThrownBy(() -> parser.apply("/muster/prod/orders/v1/")).hasMessageContaining("its instance id part is"
        + " empty");

    assertThat(parser.apply("/muster/prod/orders/v1/a-3").version()).isSameAs(first.version());
  }

  @Test
  void aKeyParserKeepsAtMostEightSegmentsAndStillParsesThoseBeyond() {
    Function<String, InstanceKey> parser = layout.keyParser();
    for (int v = 1; v <= 5; v++) {
      parser.apply("/muster/prod/orders/v" + v + "/a");
    }
    InstanceKey eighth = parser.apply("/muster/prod/orders/v6/a"); // namespace, service and six versions: full
    InstanceKey beyond = parser.apply("/muster/prod/orders/v7/a");

    assertThat(parser.apply("/muster/prod/orders/v6/b").version()).isSameAs(eighth.version());
    assertThat(beyond).isEqualTo(new InstanceKey("prod", "orders", "v7", "a"));
    assertThat(parser.apply("/muster/prod/orders/v7/b").version()).isEqualTo("v7").isNotSameAs(beyond.version());
    assertThat(parser.apply("/muster/prod/orders/v1/b").namespace()).isSameAs(eighth.namespace());
  }

  /** Each of {@code key}'s namespace, service and version that equals one of {@code first}'s is that very string. */
  private static void assertShares(InstanceKey key, InstanceKey first) {
    List<String> kept = List.of(first.namespace(), first.service(), first.version());
    for (String segment : List.of(key.namespace(), key.service(), key.version())) {
      for (String k : kept) {
        if (segment.equals(k)) {
          assertThat(segment).as("%s in %s", k, key).isSameAs(k);
        }
      }
    }
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
