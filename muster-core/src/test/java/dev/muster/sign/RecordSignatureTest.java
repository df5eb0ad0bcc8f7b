package dev.muster.sign;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.InvalidInputException;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import dev.muster.registry.InstanceState;
import dev.muster.registry.RegistryLayout;
import dev.muster.sign.UnverifiedRecordException.Reason;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** What a signature covers, and each way a record fails to verify. */
class RecordSignatureTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final SigningKey KEY = SigningKey.parse(KeysTest.OPENSSL_PRIVATE);
  private static final SigningKey OTHER = SigningKey.generate();
  private static final List<TrustedKey> TRUSTED = List.of(KEY.trustedKey());
  private static final long LEASE = 7_587_869_471_227_123_456L;
  private static final Instance INSTANCE = Instance.of("orders", "10.0.0.7", 8080).id("a").zone("z1").region("r1")
      .tags(List.of("canary", "blue")).metadata(Map.of("build", "42", "team", "core"))
      .registeredAt(Instant.parse("2026-11-29T10:00:00Z"));
  private static final String KEY_PATH = RegistryLayout.defaults().instanceKey(INSTANCE);
  private static final long SEQ = 1_764_930_000_123_456L;
  private static final Instant NOT_AFTER = Instant.parse("2026-12-05T12:00:00Z");

  /** INSTANCE's value with a member this version does not know, signed: the signature must cover it too. */
  private static final byte[] SIGNED =
      RecordSignature.sign(KEY, KEY_PATH, LEASE, SEQ, NOT_AFTER, withUnknownMember());

  private static byte[] withUnknownMember() {
    ObjectNode value = tree(InstanceCodec.encode(INSTANCE));
    value.putObject("future").put("rack", "r7").putArray("ports").add(9090).add(9091);
    return bytes(value);
  }

  @Test
  void aSignedValueVerifiesForItsKeyAndLease() {
    assertThatCode(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, SIGNED)).doesNotThrowAnyException();
    JsonNode sig = tree(SIGNED).get("sig2");
    assertThat(sig.get("kid").asText()).isEqualTo(KeysTest.OPENSSL_KEY_ID);
    assertThat(java.util.Base64.getDecoder().decode(sig.get("ed25519").asText())).hasSize(64);
  }

  @Test
  void aReaderThatDoesNotVerifyDecodesASignedValueLikeAnUnsignedOne() {
    byte[] signed = InstanceCodec.encodeSigned(INSTANCE, KEY_PATH, LEASE, SEQ, NOT_AFTER, KEY, false);
    assertThat(InstanceCodec.decode(INSTANCE.key(), signed)).isEqualTo(INSTANCE);
    assertThatCode(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, signed)).doesNotThrowAnyException();
  }

  static Stream<Arguments> changes() {
    return Stream.of(
        change("address", v -> v.put("address", "10.6.6.6")),
        change("port", v -> v.put("port", 6666)),
        change("state", v -> v.put("state", InstanceState.DRAINING.name())),
        change("weight", v -> v.put("weight", 10_000)),
        change("zone", v -> v.put("zone", "z2")),
        change("zone removed", v -> v.remove("zone")),
        change("region", v -> v.put("region", "r2")),
        change("a tag", v -> ((ArrayNode) v.get("tags")).set(0, "stable")),
        change("the tags' order", v -> v.set("tags", JSON.createArrayNode().add("blue").add("canary"))),
        change("a metadata value", v -> ((ObjectNode) v.get("metadata")).put("build", "43")),
        change("a metadata entry added", v -> ((ObjectNode) v.get("metadata")).put("admin", "true")),
        change("registeredAt", v -> v.put("registeredAt", "2026-11-29T10:00:01Z")),
        change("schema", v -> v.put("schema", 2)),
        change("an unknown member's value", v -> ((ObjectNode) v.get("future")).put("rack", "r8")),
        change("an unknown member removed", v -> v.remove("future")),
        change("an unknown member added", v -> v.put("extra", true)),
        change("a number's type", v -> v.put("port", 8080.0)),
        change("the key id, to another trusted key", v -> ((ObjectNode) v.get("sig2")).put("kid", OTHER.keyId())),
        change("the sequence", v -> ((ObjectNode) v.get("sig2")).put("seq", SEQ + 1)),
        change("notAfter", v -> ((ObjectNode) v.get("sig2")).put("notAfter", NOT_AFTER.getEpochSecond() + 3600)));
  }

  private static Arguments change(String what, Consumer<ObjectNode> change) {
    return Arguments.of(what, change);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("changes")
  void changingAnyMemberBreaksTheSignature(String what, Consumer<ObjectNode> change) {
    ObjectNode value = tree(SIGNED);
    change.accept(value);
    List<TrustedKey> both = List.of(KEY.trustedKey(), OTHER.trustedKey());

    assertThatThrownBy(() -> RecordSignature.verify(both, KEY_PATH, LEASE, bytes(value)))
        .isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE);
          assertThat(e.key()).isEqualTo(KEY_PATH);
          assertThat(e.getMessage()).isEqualTo("record " + KEY_PATH + " on lease " + LEASE + " is not verified:"
              + " the signature by key " + tree(bytes(value)).get("sig2").get("kid").asText() + " does not match"
              + " this key, lease and value (changed, moved or forged)");
        });
  }

  @Test
  void theSameValueUnderAnotherKeyPathDoesNotVerify() {
    for (String elsewhere : List.of(KEY_PATH.replace("/v1/a", "/v1/b"), KEY_PATH.replace("/orders/", "/billing/"),
        KEY_PATH.replace("/muster/", "/other/"), KEY_PATH + "x")) {
      assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, elsewhere, LEASE, SIGNED))
          .as(elsewhere).isInstanceOfSatisfying(UnverifiedRecordException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
    }
  }

  @Test
  void theSameValueOnAnotherLeaseDoesNotVerify() {
    for (long lease : new long[] {0, LEASE + 1, LEASE - 1, -LEASE}) {
      assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, lease, SIGNED))
          .as("lease %d", lease).isInstanceOfSatisfying(UnverifiedRecordException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
    }
  }

  @Test
  void anotherSpellingOfTheSameValueStillVerifies() throws Exception {
    ObjectNode reordered = JSON.createObjectNode();
    List<String> names = new ArrayList<>();
    tree(SIGNED).fieldNames().forEachRemaining(names::add);
    java.util.Collections.reverse(names);
    ObjectNode original = tree(SIGNED);
    names.forEach(n -> reordered.set(n, original.get(n)));
    byte[] pretty = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(reordered);

    assertThat(new String(pretty, UTF_8)).contains("\n").doesNotStartWith("{\"schema\"");
    assertThatCode(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, pretty)).doesNotThrowAnyException();
  }

  @Test
  void anUnsignedValueIsRefusedAsUnsigned() {
    byte[] unsigned = InstanceCodec.encode(INSTANCE);
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, unsigned))
        .isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.UNSIGNED);
          assertThat(e.getMessage()).endsWith("is not verified: it has no signature (no \"sig2\" member)");
        });
  }

  @Test
  void aKeyThatIsNotTrustedIsRefusedNamingTheTrustedIds() {
    byte[] byOther =
        RecordSignature.sign(OTHER, KEY_PATH, LEASE, SEQ, NOT_AFTER, InstanceCodec.encode(INSTANCE));
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, byOther))
        .isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY);
          assertThat(e.getMessage()).endsWith("signed by key \"" + OTHER.keyId() + "\", which is not trusted for it"
              + " (trusted: " + KEY.keyId() + ")");
        });
    assertThatThrownBy(() -> RecordSignature.verify(List.of(), KEY_PATH, LEASE, SIGNED))
        .isInstanceOfSatisfying(UnverifiedRecordException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.UNKNOWN_KEY));
  }

  @Test
  void aForgerSigningWithHisOwnKeyUnderTheTrustedKeyIdIsABadSignature() {
    ObjectNode forged =
        tree(RecordSignature.sign(OTHER, KEY_PATH, LEASE, SEQ, NOT_AFTER, InstanceCodec.encode(INSTANCE)));
    ((ObjectNode) forged.get("sig2")).put("kid", KEY.keyId());
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, bytes(forged)))
        .isInstanceOfSatisfying(UnverifiedRecordException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.BAD_SIGNATURE));
  }

  static Stream<Arguments> malformedSignatures() {
    String good = tree(SIGNED).get("sig2").get("ed25519").asText();
    String kid = "\"kid\":\"" + KEY.keyId() + "\"";
    String seq = "\"seq\":" + SEQ;
    String notAfter = "\"notAfter\":" + NOT_AFTER.getEpochSecond();
    String sig = "\"ed25519\":\"" + good + "\"";
    return Stream.of(
        Arguments.of("\"" + good + "\""),
        Arguments.of("[]"),
        Arguments.of("{" + kid + "}"),
        Arguments.of("{" + seq + "," + notAfter + "," + sig + "}"),
        Arguments.of("{" + kid + "," + notAfter + "," + sig + "}"),
        Arguments.of("{" + kid + "," + seq + "," + sig + "}"),
        Arguments.of("{\"kid\":7," + seq + "," + notAfter + "," + sig + "}"),
        Arguments.of("{" + kid + ",\"seq\":-1," + notAfter + "," + sig + "}"),
        Arguments.of("{" + kid + ",\"seq\":\"42\"," + notAfter + "," + sig + "}"),
        Arguments.of("{" + kid + "," + seq + ",\"notAfter\":1.5," + sig + "}"),
        Arguments.of("{" + kid + "," + seq + "," + notAfter + ",\"ed25519\":\"not base64!\"}"),
        Arguments.of("{" + kid + "," + seq + "," + notAfter + ",\"ed25519\":\"" + good.substring(4) + "\"}"),
        Arguments.of("{" + kid + "," + seq + "," + notAfter + "," + sig + ",\"alg\":\"none\"}"));
  }

  @ParameterizedTest
  @MethodSource("malformedSignatures")
  void aSignatureMemberOfTheWrongShapeIsRefusedAsMalformed(String sig) throws Exception {
    ObjectNode value = tree(SIGNED);
    value.set("sig2", JSON.readTree(sig));
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, bytes(value)))
        .isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.MALFORMED_SIGNATURE);
          assertThat(e.getMessage()).contains("is not {\"kid\": KEY ID, \"seq\": N, \"notAfter\": UNIX SECONDS,"
              + " \"ed25519\": base64 of 64 bytes}");
        });
  }

  @Test
  void whatTheSignatureSaysIsReturnedAndItsExpiryIsCheckedWhenAsked() {
    RecordSignature.Signed s = RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, SIGNED);
    assertThat(s).isEqualTo(new RecordSignature.Signed(KEY.keyId(), SEQ, NOT_AFTER));

    assertThatCode(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, SIGNED, NOT_AFTER.minusMillis(1)))
        .doesNotThrowAnyException();
    for (Instant late : List.of(NOT_AFTER, NOT_AFTER.plusSeconds(1))) {
      assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, SIGNED, late))
          .as("at %s", late).isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
            assertThat(e.reason()).isEqualTo(Reason.EXPIRED);
            assertThat(e.getMessage()).contains("its signature expired at 2026-12-05T12:00:00Z");
          });
    }
  }

  @Test
  void aRecordWithOnlyMuster01sSignatureIsRefusedAsOldFormat() {
    ObjectNode value = tree(SIGNED);
    value.set("sig", value.remove("sig2"));
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, bytes(value)))
        .isInstanceOfSatisfying(UnverifiedRecordException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.OLD_FORMAT);
          assertThat(e.getMessage()).endsWith("upgrade its provider");
        });
  }

  /** During an upgrade a provider signs both ways: a 0.1 consumer's check (re-done here) passes, and so does ours. */
  @Test
  void signedForBothVersionsEachVerifiesItsOwnWay() throws Exception {
    byte[] both = RecordSignature.sign(KEY, KEY_PATH, LEASE, SEQ, NOT_AFTER, withUnknownMember(), true);
    assertThat(RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, both).seq()).isEqualTo(SEQ);

    ObjectNode asOld = tree(both);
    JsonNode v1 = asOld.remove("sig");
    assertThat(v1.get("kid").asText()).isEqualTo(KEY.keyId());
    StringBuilder message = new StringBuilder("muster-record-sig-v1\n" + KEY_PATH + "\n" + LEASE + "\n");
    CanonicalJson.write(asOld, message); // 0.1's message: the value as it stands, sig2 and all
    java.security.Signature ed = java.security.Signature.getInstance("Ed25519");
    ed.initVerify(KEY.trustedKey().publicKey());
    ed.update(message.toString().getBytes(UTF_8));
    assertThat(ed.verify(java.util.Base64.getDecoder().decode(v1.get("ed25519").asText()))).isTrue();
  }

  @Test
  void twoTrustedKeysAtOnceVerifyRecordsSignedByEither() {
    List<TrustedKey> rotating = List.of(KEY.trustedKey(), OTHER.trustedKey());
    byte[] byOld = InstanceCodec.encodeSigned(INSTANCE, KEY_PATH, LEASE, SEQ, NOT_AFTER, KEY, false);
    byte[] byNew = InstanceCodec.encodeSigned(INSTANCE, KEY_PATH, LEASE, SEQ, NOT_AFTER, OTHER, false);

    assertThatCode(() -> RecordSignature.verify(rotating, KEY_PATH, LEASE, byOld)).doesNotThrowAnyException();
    assertThatCode(() -> RecordSignature.verify(rotating, KEY_PATH, LEASE, byNew)).doesNotThrowAnyException();
    assertThatThrownBy(() -> RecordSignature.verify(List.of(OTHER.trustedKey()), KEY_PATH, LEASE, byOld))
        .isInstanceOf(UnverifiedRecordException.class);
  }

  @Test
  void signingAgainReplacesTheSignatureForTheNewLease() {
    byte[] resigned = RecordSignature.sign(KEY, KEY_PATH, LEASE + 1, SEQ, NOT_AFTER, SIGNED);

    assertThatCode(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE + 1, resigned)).doesNotThrowAnyException();
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, resigned))
        .isInstanceOf(UnverifiedRecordException.class);
    Iterator<String> names = tree(resigned).fieldNames();
    int sigs = 0;
    while (names.hasNext()) {
      sigs += names.next().startsWith("sig") ? 1 : 0;
    }
    assertThat(sigs).isEqualTo(1);
  }

  @Test
  void aValueThatOnlyTheSignaturePushesOverTheLimitIsRefused() {
    int unsigned = InstanceCodec.encode(INSTANCE).length;
    Instance big = INSTANCE.meta("pad", "x".repeat(InstanceCodec.MAX_VALUE_BYTES - unsigned - 40));
    assertThat(InstanceCodec.encode(big).length).isLessThanOrEqualTo(InstanceCodec.MAX_VALUE_BYTES);

    assertThatThrownBy(() -> InstanceCodec.encodeSigned(big, KEY_PATH, LEASE, SEQ, NOT_AFTER, KEY, false))
        .isInstanceOfSatisfying(InvalidInputException.class, e -> {
          assertThat(e.field()).isEqualTo("value");
          assertThat(e.getMessage()).contains("over the 16384-byte limit");
        });
  }

  @Test
  void aValueThatIsNotAJsonObjectCannotBeSignedAndDoesNotVerify() {
    assertThatThrownBy(() -> RecordSignature.sign(KEY, KEY_PATH, LEASE, SEQ, NOT_AFTER, "[1]".getBytes(UTF_8)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RecordSignature.verify(TRUSTED, KEY_PATH, LEASE, "not json".getBytes(UTF_8)))
        .isInstanceOfSatisfying(UnverifiedRecordException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED_SIGNATURE));
  }

  private static ObjectNode tree(byte[] value) {
    try {
      return (ObjectNode) JSON.readTree(value);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  private static byte[] bytes(JsonNode value) {
    try {
      return JSON.writeValueAsBytes(value);
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }
}
