package dev.muster.registry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.muster.ErrorCode;
import dev.muster.InvalidInputException;
import dev.muster.MalformedValueException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class InstanceCodecTest {
  private static final InstanceKey KEY = new InstanceKey("default", "orders", "v1", "h-8080-abcdef");

  /** The value example of SPEC §2, verbatim. */
  private static final String SPEC_EXAMPLE =
      "{\"schema\":1,\"address\":\"10.0.0.7\",\"port\":8080,\"state\":\"UP\",\"weight\":100,\"zone\":\"a\","
          + "\"region\":\"r1\",\"tags\":[\"canary\"],\"metadata\":{\"k\":\"v\"},"
          + "\"registeredAt\":\"2026-11-29T10:00:00Z\"}";

  private static Instance decode(String json) {
    return InstanceCodec.decode(KEY, json.getBytes(UTF_8));
  }

  private static Instance full() {
    return new Instance("h-8080-abcdef", "default", "orders", "v1", "10.0.0.7", 8080, InstanceState.UP, 100, "a",
        "r1", List.of("canary"), Map.of("k", "v"), Instant.parse("2026-11-29T10:00:00Z"));
  }

  @Test
  void theSpecExampleDecodesToTheExpectedInstance() {
    assertThat(decode(SPEC_EXAMPLE)).isEqualTo(full());
  }

  @Test
  void anUpdateDecodedWithThePreviousInstanceSharesItsUnchangedPartsAndMakesTheChangedOnes() {
    Instance before = decode(SPEC_EXAMPLE);
    Instance weighed = InstanceCodec.decode(KEY, InstanceCodec.encode(before.weight(50)), before);

    assertThat(weighed).isEqualTo(before.weight(50));
    assertThat(weighed.address()).isSameAs(before.address());
    assertThat(weighed.zone()).isSameAs(before.zone());
    assertThat(weighed.region()).isSameAs(before.region());
    assertThat(weighed.tags()).isSameAs(before.tags());
    assertThat(weighed.metadata()).isSameAs(before.metadata());
    assertThat(weighed.registeredAt()).isSameAs(before.registeredAt());

    Instance moved = before.zone("b").tags(List.of("canary", "blue")).metadata(Map.of("k", "w"))
        .registeredAt(Instant.parse("2026-11-29T10:00:01Z"));
    Instance decoded = InstanceCodec.decode(KEY, InstanceCodec.encode(moved), before);
    assertThat(decoded).isEqualTo(moved);
    assertThat(decoded.address()).isSameAs(before.address());
    assertThat(decoded.zone()).isEqualTo("b");
    assertThat(decoded.tags()).isNotSameAs(before.tags()).containsExactly("canary", "blue");
    assertThat(decoded.tags().get(0)).isSameAs(before.tags().get(0));
    assertThat(decoded.metadata()).isNotSameAs(before.metadata()).containsExactlyEntriesOf(Map.of("k", "w"));
    assertThat(decoded.registeredAt()).isNotSameAs(before.registeredAt());

    assertThat(InstanceCodec.decode(KEY, SPEC_EXAMPLE.getBytes(UTF_8), null)).isEqualTo(before);
  }

  @Test
  void encodingWritesExactlyTheSpecLayout() {
    assertThat(new String(InstanceCodec.encode(full()), UTF_8)).isEqualTo(SPEC_EXAMPLE);
  }

  @Test
  void encodingLeavesOutNullZoneRegionAndRegistrationTime() {
    Instance instance = full().zone(null).region(null).registeredAt(null);

    assertThat(new String(InstanceCodec.encode(instance), UTF_8)).isEqualTo(
        "{\"schema\":1,\"address\":\"10.0.0.7\",\"port\":8080,\"state\":\"UP\",\"weight\":100,"
            + "\"tags\":[\"canary\"],\"metadata\":{\"k\":\"v\"}}");
  }

  @Test
  void encodingKeepsFractionalSeconds() {
    Instance instance = full().registeredAt(Instant.parse("2026-11-29T10:00:00.123456Z"));

    assertThat(new String(InstanceCodec.encode(instance), UTF_8))
        .contains("\"registeredAt\":\"2026-11-29T10:00:00.123456Z\"");
  }

  @Test
  void aRoundTripGivesBackAnEqualInstance() {
    Instance instance = full().state(InstanceState.DRAINING).weight(0).tags(List.of("b", "a", "ü"))
        .metadata(Map.of("z", "1", "a", "\"quoted\"\n", "emoji", "\uD83D\uDE00"))
        .registeredAt(Instant.parse("2026-11-29T10:00:00.5Z"));

    assertThat(InstanceCodec.decode(KEY, InstanceCodec.encode(instance))).isEqualTo(instance);
  }

  @Test
  void startingRoundTripsAndAnUnknownStateIsRefusedNamingTheThree() {
    Instance starting = full().state(InstanceState.STARTING);
    assertThat(InstanceCodec.decode(KEY, InstanceCodec.encode(starting)).state()).isEqualTo(InstanceState.STARTING);
    assertThat(new String(InstanceCodec.encode(starting), UTF_8)).contains("\"state\":\"STARTING\"");
  }

  @Test
  void identityComesFromTheKeyNotFromTheValue() {
    InstanceKey other = new InstanceKey("prod", "billing", "v2", "b-1");
    Instance decoded = InstanceCodec.decode(other,
        "{\"address\":\"10.0.0.7\",\"port\":8080,\"id\":\"x\",\"service\":\"y\"}".getBytes(UTF_8));

    assertThat(decoded.key()).isEqualTo(other);
  }

  @Test
  void unknownFieldsAreIgnored() {
    String json = SPEC_EXAMPLE.replace("{\"schema\":1,",
        "{\"schema\":1,\"future\":{\"nested\":[1,2]},\"healthUrl\":\"/health\",");

    assertThat(decode(json)).isEqualTo(full());
  }

  @Test
  void aLaterSchemaIsDecodedByItsKnownFields() {
    assertThat(decode(SPEC_EXAMPLE.replace("\"schema\":1", "\"schema\":2"))).isEqualTo(full());
  }

  @Test
  void missingOptionalFieldsGetTheirDefaults() {
    Instance decoded = decode("{\"address\":\"10.0.0.7\",\"port\":8080}");

    assertThat(decoded.state()).isEqualTo(InstanceState.UP);
    assertThat(decoded.weight()).isEqualTo(100);
    assertThat(decoded.zone()).isNull();
    assertThat(decoded.region()).isNull();
    assertThat(decoded.tags()).isEmpty();
    assertThat(decoded.metadata()).isEmpty();
    assertThat(decoded.registeredAt()).isNull();
  }

  @Test
  void jsonNullCountsAsAbsent() {
    Instance decoded = decode("{\"address\":\"10.0.0.7\",\"port\":8080,\"state\":null,\"weight\":null,"
        + "\"zone\":null,\"tags\":null,\"metadata\":null,\"registeredAt\":null,\"schema\":null}");

    assertThat(decoded).isEqualTo(decode("{\"address\":\"10.0.0.7\",\"port\":8080}"));
  }

  @Test
  void registrationTimeWithAnOffsetIsConvertedToUtc() {
    Instance decoded = decode("{\"address\":\"h\",\"port\":1,\"registeredAt\":\"2026-11-29T11:00:00+01:00\"}");

    assertThat(decoded.registeredAt()).isEqualTo(Instant.parse("2026-11-29T10:00:00Z"));
  }

  @Test
  void aMissingRequiredFieldIsNamed() {
    assertThatThrownBy(() -> decode("{\"port\":8080}"))
        .isInstanceOf(MalformedValueException.class)
        .hasMessage("value of default/orders/v1/h-8080-abcdef is malformed: field \"address\" is missing");
    assertThatThrownBy(() -> decode("{\"address\":\"10.0.0.7\"}"))
        .hasMessageEndingWith("field \"port\" is missing");
  }

  @ParameterizedTest
  @ValueSource(strings = {"not json", "{\"address\":", "{\"address\":\"h\",\"port\":1}}", "{'address':'h'}",
      "{\"address\":\"h\",\"port\":1} {}", "{\"address\":\"h\",\"port\":1,\"port\":2}"})
  void malformedJsonIsRejectedOnOneLineNamingTheKey(String json) {
    assertThatThrownBy(() -> decode(json))
        .isInstanceOf(MalformedValueException.class)
        .hasMessageStartingWith("value of default/orders/v1/h-8080-abcdef is malformed: not JSON: ")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"))
        .satisfies(e -> assertThat(((MalformedValueException) e).code()).isEqualTo(ErrorCode.INVALID_INPUT));
  }

  @Test
  void anEmptyValueIsRejected() {
    assertThatThrownBy(() -> InstanceCodec.decode(KEY, new byte[0])).hasMessageEndingWith("malformed: empty,"
        + " expected a JSON object");
    assertThatThrownBy(() -> decode("   ")).hasMessageContaining("empty");
  }

  @Test
  void aValueThatIsNotAnObjectIsRejected() {
    assertThatThrownBy(() -> decode("[1,2]")).hasMessageEndingWith("not a JSON object but an array");
    assertThatThrownBy(() -> decode("\"x\"")).hasMessageEndingWith("not a JSON object but a string");
  }

  @Test
  void invalidUtf8IsRejected() {
    byte[] value = {'{', '"', 'a', '"', ':', '"', (byte) 0xC3, (byte) 0x28, '"', '}'};

    assertThatThrownBy(() -> InstanceCodec.decode(KEY, value)).hasMessageEndingWith("not UTF-8 text");
  }

  @Test
  void wrongTypesNameTheFieldAndTheValue() {
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":\"8080\"}"))
        .hasMessageEndingWith("field \"port\" has bad value \"8080\": expected an integer 1-65535");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80.5}"))
        .hasMessageEndingWith("field \"port\" has bad value 80.5: expected an integer 1-65535");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":99999999999}"))
        .hasMessageContaining("field \"port\" has bad value 99999999999");
    assertThatThrownBy(() -> decode("{\"address\":7,\"port\":80}"))
        .hasMessageEndingWith("field \"address\" has bad value 7: expected a string");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"weight\":true}"))
        .hasMessageContaining("field \"weight\" has bad value true");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"tags\":\"canary\"}"))
        .hasMessageContaining("field \"tags\" has bad value \"canary\"");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"tags\":[1]}"))
        .hasMessageContaining("field \"tags\" has bad value 1");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"metadata\":{\"k\":1}}"))
        .hasMessageContaining("field \"metadata.k\" has bad value 1: expected a string");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"metadata\":[]}"))
        .hasMessageContaining("field \"metadata\" has bad value []");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"state\":\"down\"}"))
        .hasMessageEndingWith("field \"state\" has bad value \"down\": expected \"UP\", \"STARTING\" or \"DRAINING\"");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"registeredAt\":\"yesterday\"}"))
        .hasMessageContaining("field \"registeredAt\" has bad value \"yesterday\"");
    assertThatThrownBy(() -> decode("{\"schema\":\"1\",\"address\":\"h\",\"port\":80}"))
        .hasMessageContaining("field \"schema\" has bad value \"1\"");
    assertThatThrownBy(() -> decode("{\"schema\":0,\"address\":\"h\",\"port\":80}"))
        .hasMessageContaining("field \"schema\" has bad value 0");
  }

  @Test
  void valuesThatBreakTheInstanceRulesAreMalformedWithTheRuleInTheMessage() {
    assertThatThrownBy(() -> decode("{\"address\":\"http://h\",\"port\":80}"))
        .isInstanceOf(MalformedValueException.class)
        .hasMessageStartingWith("value of default/orders/v1/h-8080-abcdef is malformed: address \"http://h\" is"
            + " invalid: remove the scheme")
        .hasCauseInstanceOf(InvalidInputException.class);
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":0}"))
        .hasMessageEndingWith("malformed: port 0 is invalid: use 1-65535");
    assertThatThrownBy(() -> decode("{\"address\":\"h\",\"port\":80,\"tags\":[\"a\",\"a\"]}"))
        .hasMessageContaining("tag \"a\" is invalid: each tag may appear only once");
  }

  @Test
  void anOversizedValueIsRejectedOnDecode() {
    String padding = "x".repeat(InstanceCodec.MAX_VALUE_BYTES);
    byte[] value = ("{\"address\":\"h\",\"port\":80,\"pad\":\"" + padding + "\"}").getBytes(UTF_8);

    assertThatThrownBy(() -> InstanceCodec.decode(KEY, value))
        .isInstanceOf(MalformedValueException.class)
        .hasMessageEndingWith("malformed: too large: " + value.length + " bytes > 16384");
  }

  @Test
  void aValueOfExactly16KibIsAccepted() {
    String head = "{\"address\":\"h\",\"port\":80,\"pad\":\"";
    String padding = "x".repeat(InstanceCodec.MAX_VALUE_BYTES - head.length() - 2);
    byte[] value = (head + padding + "\"}").getBytes(UTF_8);

    assertThat(value).hasSize(16_384);
    assertThat(InstanceCodec.decode(KEY, value).address()).isEqualTo("h");
  }

  @Test
  void anInstanceThatWouldEncodeOver16KibIsRejectedOnEncode() {
    Instance big = full();
    for (int i = 0; i < 300; i++) {
      big = big.meta("key-" + i, "v".repeat(60));
    }
    Instance tooBig = big;

    assertThatThrownBy(() -> InstanceCodec.encode(tooBig))
        .isInstanceOf(InvalidInputException.class)
        .hasMessageMatching("instance default/orders/v1/h-8080-abcdef encodes to \\d+ bytes, over the 16384-byte"
            + " limit of a registry value: shrink its metadata or tags");
  }
}
