package dev.muster.registry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.MalformedValueException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The streaming decoder never accepts what the tree decoder refuses, and decodes what it accepts to an equal
 * instance; {@code decode} (streaming first, the tree when streaming gives up) behaves exactly as the tree alone,
 * error messages included. Over hand-picked values and 20,000 mutations of them.
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

  private static String outcome(java.util.function.Supplier<Instance> decode) {
    try {
      return "ok " + decode.get();
    } catch (MalformedValueException e) {
      return "error " + e.getMessage();
    }
  }

  private static void check(byte[] value, int[] fastAccepted) {
    ValueDecoder decoder = new ValueDecoder(KEY);
    String tree = outcome(() -> decoder.tree(value));
    if (value.length > 0 && value.length <= InstanceCodec.MAX_VALUE_BYTES && Utf8.isValid(value)) {
      Instance fast = decoder.streaming(value);
      if (fast != null) {
        fastAccepted[0]++;
        assertThat(tree).as("the tree decoder on a value streaming accepted: %s", show(value))
            .isEqualTo("ok " + fast);
      }
    }
    assertThat(outcome(() -> decoder.decode(value))).as("decode of %s", show(value)).isEqualTo(tree);
  }

  private static String show(byte[] value) {
    return new String(value, UTF_8).replace("\n", "\\n");
  }

  @Test
  void theHandPickedValuesDecodeAlikeAndTheWellFormedOnesTakeTheStreamingPath() {
    int[] fast = {0};
    for (String seed : SEEDS) {
      check(seed.getBytes(UTF_8), fast);
    }
    assertThat(fast[0]).as("values the streaming path accepted").isEqualTo(7);
  }

  @Test
  void twentyThousandMutationsDecodeAlike() {
    SplittableRandom random = new SplittableRandom(20_000);
    String[] fragments = {"\"", "{", "}", "[", "]", ",", ":", "null", "1", "-1", "1.5", "1e3", "\"UP\"",
        "\"port\":", "\"address\":\"h\",", "\"tags\":[", "\"metadata\":{", "\\u0000", "\\", " ", "\u00e9", "true"};
    int[] fast = {0};
    List<byte[]> values = new ArrayList<>();
    for (int i = 0; i < 20_000; i++) {
      byte[] v = SEEDS.get(random.nextInt(SEEDS.size())).getBytes(UTF_8);
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
    for (byte[] v : values) {
      check(v, fast);
    }
    assertThat(fast[0]).as("mutations the streaming path accepted (some must, or this tests nothing)")
        .isGreaterThan(500);
  }

  @Test
  void aByteOrderMarkOrANulByteLeavesItToTheTree() {
    byte[] bom = ("\uFEFF" + SEEDS.get(0)).getBytes(UTF_8);
    assertThat(Utf8.isValid(bom)).isFalse();
    check(bom, new int[1]);
    byte[] nul = (SEEDS.get(0).replace(",\"port\"", "\u0000,\"port\"")).getBytes(UTF_8);
    assertThat(Utf8.isValid(nul)).isFalse();
    check(nul, new int[1]);
  }

  private static byte[] splice(byte[] v, int from, int to, byte[] insert) {
    byte[] out = new byte[v.length - (to - from) + insert.length];
    System.arraycopy(v, 0, out, 0, from);
    System.arraycopy(insert, 0, out, from, insert.length);
    System.arraycopy(v, to, out, from + insert.length, v.length - to);
    return out;
  }
}
