package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.InvalidInputException;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class InstanceTest {
  private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
  private static final InstanceIdGenerator IDS = new InstanceIdGenerator(() -> "host", new Random(1));

  private static Instance orders() {
    return Instance.of("orders", "10.0.0.7", 8080, IDS, Clock.fixed(NOW, ZoneOffset.UTC));
  }

  @Test
  void ofFillsTheDefaults() {
    Instance instance = orders();

    assertThat(instance.namespace()).isEqualTo("default");
    assertThat(instance.version()).isEqualTo("v1");
    assertThat(instance.state()).isEqualTo(InstanceState.UP);
    assertThat(instance.weight()).isEqualTo(100);
    assertThat(instance.zone()).isNull();
    assertThat(instance.region()).isNull();
    assertThat(instance.tags()).isEmpty();
    assertThat(instance.metadata()).isEmpty();
    assertThat(instance.registeredAt()).isEqualTo(NOW);
    assertThat(instance.id()).matches("^host-8080-[0-9a-f]{6}$");
  }

  @Test
  void ofWithoutArgumentsUsesTheSystemIdGeneratorAndClock() {
    Instance instance = Instance.of("orders", "10.0.0.7", 8080);

    assertThat(instance.id()).matches("^[a-z0-9-]+-8080-[0-9a-f]{6}$");
    assertThat(instance.registeredAt()).isNotNull();
  }

  @Test
  void withersReturnANewInstanceAndLeaveTheOriginalAlone() {
    Instance original = orders();
    Instance changed = original.zone("a").weight(50).region("r1").state(InstanceState.DRAINING)
        .tag("canary").meta("k", "v").version("v2").namespace("prod").id("orders-1");

    assertThat(changed.zone()).isEqualTo("a");
    assertThat(changed.weight()).isEqualTo(50);
    assertThat(changed.region()).isEqualTo("r1");
    assertThat(changed.state()).isEqualTo(InstanceState.DRAINING);
    assertThat(changed.tags()).containsExactly("canary");
    assertThat(changed.metadata()).containsExactly(Map.entry("k", "v"));
    assertThat(changed.key()).isEqualTo(new InstanceKey("prod", "orders", "v2", "orders-1"));
    assertThat(original.zone()).isNull();
    assertThat(original.weight()).isEqualTo(100);
  }

  @Test
  void rejectsAnInvalidServiceNamingIt() {
    assertThatThrownBy(() -> Instance.of("Orders_API", "10.0.0.7", 8080, IDS, Clock.systemUTC()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("service \"Orders_API\" is invalid");
  }

  @ParameterizedTest
  @ValueSource(ints = {0, -1, 65_536, 70_000})
  void rejectsPortsOutsideOneTo65535(int port) {
    assertThatThrownBy(() -> orders().port(port))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("port " + port + " is invalid: use 1-65535");
  }

  @Test
  void acceptsTheExtremePorts() {
    assertThat(orders().port(1).port()).isEqualTo(1);
    assertThat(orders().port(65_535).port()).isEqualTo(65_535);
  }

  @Test
  void rejectsAnAddressWithAScheme() {
    assertThatThrownBy(() -> orders().address("http://x"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("address \"http://x\" is invalid: remove the scheme");
  }

  @Test
  void rejectsAnAddressWithAPort() {
    assertThatThrownBy(() -> orders().address("x:80"))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("address \"x:80\" is invalid: remove the port");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "  "})
  void rejectsABlankAddress(String address) {
    assertThatThrownBy(() -> orders().address(address))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageContaining("address");
  }

  @Test
  void rejectsAMissingAddress() {
    assertThatThrownBy(() -> orders().address(null)).hasMessageStartingWith("address is missing");
  }

  @ParameterizedTest
  @ValueSource(strings = {"a b", "[::1]", "[::1]:80", "10.0.0.256", "10.0.0", "01.2.3.4", "-host", "host-",
      "a..b", "host.", "fe80::1%eth0", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::1.2.3",
      "host/path"})
  void rejectsAddressesThatAreNeitherHostNamesNorIpLiterals(String address) {
    assertThatThrownBy(() -> orders().address(address))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageStartingWith("address ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"10.0.0.7", "0.0.0.0", "255.255.255.255", "localhost", "orders.internal",
      "Orders.Example.COM", "orders_web_1", "h", "::", "::1", "fd00::7", "1:2:3:4:5:6:7:8", "1::", "::ffff:10.0.0.7",
      "2001:db8:0:0:1:0:0:1", "1:2:3:4:5:6:1.2.3.4"})
  void acceptsHostNamesAndIpLiterals(String address) {
    assertThat(orders().address(address).address()).isEqualTo(address);
  }

  @ParameterizedTest
  @ValueSource(ints = {-1, 10_001})
  void rejectsWeightsOutsideZeroTo10000(int weight) {
    assertThatThrownBy(() -> orders().weight(weight))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("weight " + weight + " is invalid: use 0-10000");
  }

  @Test
  void acceptsTheExtremeWeights() {
    assertThat(orders().weight(0).weight()).isZero();
    assertThat(orders().weight(10_000).weight()).isEqualTo(10_000);
  }

  @Test
  void rejectsAZoneOrRegionThatIsNotADnsLabel() {
    assertThatThrownBy(() -> orders().zone("Zone A")).hasMessageStartingWith("zone \"Zone A\" is invalid");
    assertThatThrownBy(() -> orders().region("")).hasMessageStartingWith("region is empty");
  }

  @Test
  void rejectsAMissingState() {
    assertThatThrownBy(() -> orders().state(null)).hasMessage("state is missing: use UP, STARTING or DRAINING");
  }

  @Test
  void rejectsDuplicateTagsNamingTheTag() {
    assertThatThrownBy(() -> orders().tags(List.of("canary", "blue", "canary")))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("tag \"canary\" is invalid: each tag may appear only once");
  }

  @Test
  void manyTagsInAnyListAreCheckedAlikeFirstProblemFirst() { // more than eight, or not random access: a hash set
    List<String> nine = List.of("t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t2");
    assertThatThrownBy(() -> orders().tags(nine)).hasMessage("tag \"t2\" is invalid: each tag may appear only once");
    assertThatThrownBy(() -> orders().tags(new java.util.LinkedList<>(List.of("a", "b", "a"))))
        .hasMessage("tag \"a\" is invalid: each tag may appear only once");
    assertThatThrownBy(() -> orders().tags(List.of("a", "a", " ")))
        .hasMessage("tag \"a\" is invalid: each tag may appear only once");
    assertThatThrownBy(() -> orders().tags(List.of("a", " ", "a"))).hasMessageStartingWith("tag \" \" is invalid");
    assertThat(orders().tags(new java.util.LinkedList<>(List.of("b", "a"))).tags()).containsExactly("b", "a");
    assertThat(orders().tags(new ArrayList<>(nine.subList(0, 8))).tags()).hasSize(8);
  }

  @Test
  void rejectsBlankTooLongAndNullTags() {
    assertThatThrownBy(() -> orders().tag(" ")).hasMessageStartingWith("tag \" \" is invalid");
    assertThatThrownBy(() -> orders().tag("t".repeat(64))).hasMessageStartingWith("tag \"ttt");
    List<String> withNull = new ArrayList<>();
    withNull.add(null);
    assertThatThrownBy(() -> orders().tags(withNull)).hasMessageStartingWith("tag is missing");
  }

  @Test
  void rejectsBlankOrTooLongMetadataKeysAndNullValues() {
    assertThatThrownBy(() -> orders().meta("", "v")).hasMessageStartingWith("metadata key is empty");
    assertThatThrownBy(() -> orders().meta("k".repeat(64), "v")).hasMessageStartingWith("metadata key \"kkk");
    assertThatThrownBy(() -> orders().meta(null, "v")).hasMessageStartingWith("metadata key is missing");
    assertThatThrownBy(() -> orders().meta("k", null)).hasMessageStartingWith("metadata[k] is missing");
  }

  @Test
  void keepsTagsInOrderAndMetadataSortedByKey() {
    Instance instance = orders().tags(List.of("b", "a")).metadata(Map.of("z", "1", "a", "2", "m", "3"));

    assertThat(instance.tags()).containsExactly("b", "a");
    assertThat(instance.metadata().keySet()).containsExactly("a", "m", "z");
  }

  @Test
  void copiesCollectionsSoLaterChangesToTheArgumentsDoNotLeakIn() {
    List<String> tags = new ArrayList<>(List.of("a"));
    Map<String, String> metadata = new HashMap<>(Map.of("k", "v"));
    Instance instance = orders().tags(tags).metadata(metadata);
    tags.add("b");
    metadata.put("k2", "v2");

    assertThat(instance.tags()).containsExactly("a");
    assertThat(instance.metadata()).containsOnlyKeys("k");
    assertThatThrownBy(() -> instance.tags().add("c")).isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> instance.metadata().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void keepsACollectionThatCannotChangeAndStillChecksIt() {
    Map<String, String> one = Map.of("k", "v");
    List<String> tags = List.of("a");
    Instance instance = orders().tags(tags).metadata(one);

    assertThat(instance.metadata()).isSameAs(one);
    assertThat(instance.tags()).isSameAs(tags);
    assertThatThrownBy(() -> orders().metadata(Map.of("", "v"))).hasMessageStartingWith("metadata key is empty");
  }

  @Test
  void treatsNullCollectionsAsEmptyAndAllowsAnUnknownRegistrationTime() {
    Instance instance = orders().tags(null).metadata(null).registeredAt(null);

    assertThat(instance.tags()).isEmpty();
    assertThat(instance.metadata()).isEmpty();
    assertThat(instance.registeredAt()).isNull();
  }

  @Test
  void instancesWithTheSameFieldsAreEqual() {
    assertThat(orders().id("a").meta("k", "v")).isEqualTo(orders().id("a").metadata(Map.of("k", "v")));
  }
}
