package dev.muster.registry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.MalformedValueException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The canonical and streaming decoders never accept what the tree decoder refuses, and decode what they accept to
 * an equal instance; {@code decode} (canonical first, then streaming, the tree when both give up) behaves exactly as
 * the tree alone, error messages included. Over hand-picked values, the encoder's output for varied instances, and
 * 20,000 mutations of each.
 */
class ValueDecoderEquivalenceTest {
  private static final InstanceKey KEY = new InstanceKey("default", "orders", "v1", "h-8080-abcdef");

  private static final List<String> SEEDS = List.of(
      "{\"schema\":1,\"address\":\"10.0.0.7\",\"port\":8080,\"state\":\"UP\",\"weight\":100,\"zone\":\"a\","
          + "\"region\":\"r1\",\"tags\":[\"canary\"],\"metadata\":{\"k\":\"v\"},"
          + "\"registeredAt\":\"2026-11-29T10:00:00Z\"}",
      "{\"address\":\"fd00::7\",\"port\":8443,\"state\":\"DRAINING\",\"weight\":5,\"tags\":[\"a\",\"b\"],"
          + "\"metadata\":{\"team\":\"x\",\"note\":\"<img src=x onerror=alert(1)>\"}}",
      "{\"address\":\"h\",\"port\":1,\"zone\":null,\"region\":null,\"tags\":null,\"metadata\":null,\"state\":null,"
          + "\"weight\":null,\"registeredAt\":null,\"schema\":null}",
      "{\"schema\":2,\"address\":\"h.example\",\"port\":65535,\"future\":{\"x\":[1,2,{\"y\":null}]},\"state\":\"STARTING\"}",
      "{\"address\":\"10.0.0.9\",\"port\":80,\"sig\":{\"kid\":\"k1\",\"ed25519\":\"AAAA\"}}",
      "  {\"port\":80 , \"address\" : \"h\" ,\"registeredAt\":\"2026-11-29T10:00:00.123+02:00\"}\n",
      "{\"address\":\"h\",\"port\":80,\"metadata\":{\"k\":\"\\u00e9\\n\\\"\"},\"tags\":[\"\\u263a\"]}",
      "{\"address\":\"h\",\"port\":\"8080\"}",
      "{\"address\":\"h\",\"port\":80.5}",
      "{\"address\":\"h\",\"port\":99999999999}",
      "{\"address\":\"http://h\",\"port\":80}",
      "{\"address\":\"h\",\"port\":0}",
      "{\"address\":\"h\",\"port\":80,\"port\":81}",
      "{\"address\":\"h\",\"port\":80} {}",
      "{\"address\":\"h\",\"port\":80,\"metadata\":{\"k\":\"v\",\"k\":\"w\"}}",
      "{\"address\":\"h\",\"port\":80,\"future\":1,\"future\":2}",
      "{\"address\":\"h\",\"port\":80,\"future\":{\"x\":1,\"y\":{\"z\":[],\"z\":null}}}",
      "{\"address\":\"h\",\"port\":80,\"future\":[1,{\"x\":1,\"x\":2}]}",
      "{\"address\":\"h\",\"zone\":\"a\",\"port\":80,\"zone\":\"a\"}",
      "{\"address\":\"h\",\"port\":80,\"weight\":10001}",
      "{\"address\":\"h\",\"port\":80,\"tags\":[\"a\",\"a\"]}",
      "{\"address\":\"h\",\"port\":80,\"zone\":\"Bad Zone\"}",
      "{\"address\":7,\"port\":80}",
      "{\"address\":\"h\",\"port\":80,\"weight\":true}",
      "{\"address\":\"h\",\"port\":80,\"weight\":-1}",
      "{\"address\":\"h\",\"port\":80,\"tags\":\"canary\"}",
      "{\"address\":\"h\",\"port\":80,\"tags\":[1]}",
      "{\"address\":\"h\",\"port\":80,\"metadata\":{\"k\":1}}",
      "{\"address\":\"h\",\"port\":80,\"metadata\":[]}",
      "{\"address\":\"h\",\"port\":80,\"state\":\"down\"}",
      "{\"address\":\"h\",\"port\":80,\"state\":1}",
      "{\"address\":\"h\",\"port\":80,\"registeredAt\":\"yesterday\"}",
      "{\"address\":\"h\",\"port\":80,\"registeredAt\":5}",
      "{\"schema\":\"1\",\"address\":\"h\",\"port\":80}",
      "{\"schema\":0,\"address\":\"h\",\"port\":80}",
      "{\"schema\":-1,\"address\":\"h\",\"port\":80}",
      "{\"schema\":1.0,\"address\":\"h\",\"port\":80}",
      "{\"schema\":1,\"port\":80}",
      "{\"address\":\"h\"}",
      "{\"address\":\"h\",\"port\":80,\"zone\":5}",
      "{\"address\":\"h\",\"port\":80,\"region\":[]}",
      "[1,2]", "\"x\"", "   ", "not json", "{}");

  /** The encoder's spelling, and near misses of it that only the tree may decide. */
  private static final List<String> CANONICAL_SEEDS = List.of(
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],"
          + "\"metadata\":{\"k\":\"v\",\"k\":\"w\"}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[\"a\",\"a\"],"
          + "\"metadata\":{}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"zone\":\"\",\"tags\":[],"
          + "\"metadata\":{}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{},"
          + "\"registeredAt\":\"1970-01-01T00:00:00Z\"}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{},"
          + "\"registeredAt\":\"2026-11-29T10:00:00.5+01:00\"}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{},"
          + "\"registeredAt\":\"2026-02-29T10:00:00Z\"}",
      "{\"schema\":1,\"address\":\"h\",\"port\":080,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":1234567890,\"state\":\"UP\",\"weight\":100,\"tags\":[],"
          + "\"metadata\":{}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[\"a\\u0062\"],"
          + "\"metadata\":{\"k\":\"\t\"}}",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{}} ",
      "{\"schema\":1,\"address\":\"h\",\"port\":80,\"state\":\"UP\",\"weight\":100,\"tags\":[],\"metadata\":{},"
          + "\"sig\":{\"kid\":\"k1\",\"ed25519\":\"AAAA\"}}");

  private static final List<Instance> ENCODED_INSTANCES = encodedInstances();

  /** What the encoder writes for varied instances: every optional member present and absent, odd addresses. */
  private static List<String> encoded() {
    List<String> values = new ArrayList<>();
    for (Instance instance : ENCODED_INSTANCES) {
      values.add(new String(InstanceCodec.encode(instance), UTF_8));
    }
    return values;
  }

  private static List<Instance> encodedInstances() {
    Instance base = new Instance("h-8080-abcdef", "default", "orders", "v1", "10.0.0.7", 8080, InstanceState.UP,
        100, "a", "r1", List.of("canary"), java.util.Map.of("k", "v"), java.time.Instant.parse("2026-11-29T10:00:00Z"));
    List<Instance> instances = List.of(base, base.zone(null).region(null).registeredAt(null),
        base.address("fd00::7").state(InstanceState.DRAINING).weight(0).tags(List.of()).metadata(java.util.Map.of()),
        base.address("::ffff:10.0.0.7").state(InstanceState.STARTING).weight(10_000).port(65_535)
            .tags(List.of("a", "b", "c")).metadata(java.util.Map.of("team", "x", "note", "caf\u00e9 \u263a", "e", "")),
        base.address("orders_web_1.internal").port(1).registeredAt(java.time.Instant.parse("2026-11-29T10:00:00.123Z")),
        base.zone(null).registeredAt(java.time.Instant.ofEpochSecond(1_700_000_000L, 123_456_789)),
        base.region(null).tags(List.of("t\u00e9", "x-y")).registeredAt(java.time.Instant.EPOCH));
    return instances;
  }

  private static String outcome(java.util.function.Supplier<Instance> decode) {
    try {
      return "ok " + decode.get();
    } catch (MalformedValueException e) {
      return "error " + e.getMessage();
    }
  }

  /** Counts in {@code fastAccepted[0]} what streaming accepted, in {@code [1]} what the canonical path did. */
  private static void check(byte[] value, int[] fastAccepted) {
    ValueDecoder decoder = new ValueDecoder(KEY);
    String tree = outcome(() -> decoder.tree(value));
    if (value.length > 0 && value.length <= InstanceCodec.MAX_VALUE_BYTES && Utf8.isValid(value)) {
      Instance canonical = CanonicalValue.read(KEY, value, null);
      for (Instance same : hints(canonical)) { // sharing an earlier instance's parts decides nothing differently
        assertThat(CanonicalValue.read(KEY, value, same)).as("the canonical path on %s, sharing %s", show(value), same)
            .isEqualTo(canonical);
      }
      if (canonical != null) {
        fastAccepted[1]++;
        assertThat(tree).as("the tree decoder on a value the canonical path accepted: %s", show(value))
            .isEqualTo("ok " + canonical);
      }
      Instance fast = decoder.streaming(value);
      if (fast != null) {
        fastAccepted[0]++;
        assertThat(tree).as("the tree decoder on a value streaming accepted: %s", show(value))
            .isEqualTo("ok " + fast);
      }
    }
    assertThat(outcome(() -> decoder.decode(value))).as("decode of %s", show(value)).isEqualTo(tree);
  }

  /** Instances an update's decoding may share parts with: the encoder's varied ones, and {@code decoded} itself. */
  private static List<Instance> hints(Instance decoded) {
    List<Instance> hints = new ArrayList<>(ENCODED_INSTANCES);
    if (decoded != null) {
      hints.add(decoded);
      hints.add(decoded.weight(decoded.weight() == 0 ? 1 : 0));
    }
    return hints;
  }

  private static String show(byte[] value) {
    return new String(value, UTF_8).replace("\n", "\\n");
  }

  @Test
  void theHandPickedValuesDecodeAlikeAndTheWellFormedOnesTakeTheStreamingPath() {
    int[] fast = {0, 0};
    for (String seed : SEEDS) {
      check(seed.getBytes(UTF_8), fast);
    }
    assertThat(fast[0]).as("values the streaming path accepted").isEqualTo(7);
    assertThat(fast[1]).as("values the canonical path accepted").isEqualTo(1);
  }

  @Test
  void theEncodersOutputTakesTheCanonicalPathAndItsNearMissesDoNot() {
    int[] fast = {0, 0};
    for (String value : encoded()) {
      check(value.getBytes(UTF_8), fast);
    }
    assertThat(fast[1]).as("encoded values the canonical path accepted").isEqualTo(encoded().size());
    for (String seed : CANONICAL_SEEDS) {
      check(seed.getBytes(UTF_8), fast);
    }
    assertThat(fast[1]).as("near misses the canonical path accepted, beyond the encoded values")
        .isEqualTo(encoded().size() + 3); // the first seed, the epoch and the time with an offset
  }

  @Test
  void fortyThousandMutationsOfTheEncodersOutputDecodeAlike() {
    List<String> seeds = new ArrayList<>(encoded());
    seeds.addAll(CANONICAL_SEEDS);
    int[] fast = {0, 0};
    for (byte[] v : mutations(new SplittableRandom(3), seeds)) {
      check(v, fast);
    }
    SplittableRandom random = new SplittableRandom(7);
    String near = "0123456789az.:-_\"{}[],\\ \u0001\u007f\u00e9";
    for (int i = 0; i < 20_000; i++) { // small edits that often keep the encoder's spelling, changing a value
      StringBuilder v = new StringBuilder(seeds.get(random.nextInt(seeds.size())));
      for (int e = 1 + random.nextInt(2); e > 0; e--) {
        int at = random.nextInt(v.length());
        char c = near.charAt(random.nextInt(near.length()));
        if (random.nextBoolean()) {
          v.setCharAt(at, c);
        } else {
          v.insert(at, c);
        }
      }
      check(v.toString().getBytes(UTF_8), fast);
    }
    assertThat(fast[1]).as("mutations the canonical path accepted (some must, or this tests nothing)")
        .isGreaterThan(500);
  }

  @Test
  void twentyThousandMutationsDecodeAlike() {
    int[] fast = {0, 0};
    for (byte[] v : mutations(new SplittableRandom(20_000), SEEDS)) {
      check(v, fast);
    }
    assertThat(fast[0]).as("mutations the streaming path accepted (some must, or this tests nothing)")
        .isGreaterThan(500);
  }

  private static List<byte[]> mutations(SplittableRandom random, List<String> seeds) {
    String[] fragments = {"\"", "{", "}", "[", "]", ",", ":", "null", "1", "-1", "1.5", "1e3", "\"UP\"",
        "\"port\":", "\"address\":\"h\",", "\"tags\":[", "\"metadata\":{", "\\u0000", "\\", " ", "\u00e9", "true"};
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      byte[] v = seeds.get(random.nextInt(seeds.size())).getBytes(UTF_8);
      int edits = 1 + random.nextInt(3);
      for (int e = 0; e < edits && v.length > 0; e++) {
        int at = random.nextInt(v.length);
        switch (random.nextInt(4)) {
          case 0 -> v[at] = (byte) random.nextInt(256); // any byte, bad UTF-8 and NUL included
          case 1 -> v = splice(v, at, at + 1 + random.nextInt(Math.min(6, v.length - at)), new byte[0]);
          default -> v = splice(v, at, at, fragments[random.nextInt(fragments.length)].getBytes(UTF_8));
        }
      }
      values.add(v);
    }
    return values;
  }

  @Test
  void aByteOrderMarkOrANulByteLeavesItToTheTree() {
    byte[] bom = ("\uFEFF" + SEEDS.get(0)).getBytes(UTF_8);
    assertThat(Utf8.isValid(bom)).isFalse();
    check(bom, new int[2]);
    byte[] nul = (SEEDS.get(0).replace(",\"port\"", "\u0000,\"port\"")).getBytes(UTF_8);
    assertThat(Utf8.isValid(nul)).isFalse();
    check(nul, new int[2]);
  }

  @Test
  void deeplyNestedUnknownMembersDecodeAlike() { // the streaming path's duplicate check recurses into them
    for (int depth : new int[] {10, 240, 1_000, 2_000}) {
      String nested = "[{\"x\":".repeat(depth) + "1" + "}]".repeat(depth);
      check(("{\"address\":\"h\",\"port\":80,\"future\":" + nested + "}").getBytes(UTF_8), new int[2]);
    }
  }

  private static byte[] splice(byte[] v, int from, int to, byte[] insert) {
    byte[] out = new byte[v.length - (to - from) + insert.length];
    System.arraycopy(v, 0, out, 0, from);
    System.arraycopy(insert, 0, out, from, insert.length);
    System.arraycopy(v, to, out, from + insert.length, v.length - to);
    return out;
  }
}
