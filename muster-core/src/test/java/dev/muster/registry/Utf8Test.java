package dev.muster.registry;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link Utf8#isValid} agrees with the JDK's strict decoder (and refuses NUL and a byte-order mark). */
class Utf8Test {
  private static boolean jdk(byte[] b) {
    try {
      String s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b)).toString();
      return s.indexOf('\0') < 0 && !s.startsWith("\uFEFF");
    } catch (CharacterCodingException e) {
      return false;
    }
  }

  @Test
  void everyOneAndTwoByteSequenceAgreesWithTheJdk() {
    for (int a = 0; a < 256; a++) {
      assertThat(Utf8.isValid(new byte[] {(byte) a})).as("%02x", a).isEqualTo(jdk(new byte[] {(byte) a}));
      for (int b = 0; b < 256; b++) {
        byte[] v = {(byte) a, (byte) b};
        assertThat(Utf8.isValid(v)).as("%02x %02x", a, b).isEqualTo(jdk(v));
      }
    }
  }

  @Test
  void threeHundredThousandRandomShortSequencesAgreeWithTheJdk() {
    SplittableRandom random = new SplittableRandom(8);
    int[] interesting = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
        0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF, 0xBB};
    int valid = 0;
    for (int i = 0; i < 300_000; i++) {
      byte[] v = new byte[1 + random.nextInt(7)];
      for (int k = 0; k < v.length; k++) {
        v[k] = (byte) (random.nextInt(3) == 0 ? random.nextInt(256) : interesting[random.nextInt(interesting.length)]);
      }
      boolean expected = jdk(v);
      assertThat(Utf8.isValid(v)).as("%s", java.util.HexFormat.of().formatHex(v)).isEqualTo(expected);
      valid += expected ? 1 : 0;
    }
    assertThat(valid).as("valid sequences among them").isGreaterThan(3_000);
  }
}
