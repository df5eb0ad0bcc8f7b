package dev.muster.sign;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The canonical text that signatures are computed over. */
class CanonicalJsonTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static String canonical(String json) throws Exception {
    StringBuilder out = new StringBuilder();
    CanonicalJson.write(JSON.readTree(json), out);
    return out.toString();
  }

  @Test
  void membersAreSortedAtEveryLevelAndSpacesDropped() throws Exception {
    assertThat(canonical("{ \"b\" : 1, \"a\" : { \"z\": [3, 2, {\"y\": 1, \"x\": 2}], \"c\": null } }"))
        .isEqualTo("{\"a\":{\"c\":null,\"z\":[3,2,{\"x\":2,\"y\":1}]},\"b\":1}");
  }

  @Test
  void membersSortByUtf16CodeUnitsAsRfc8785Says() throws Exception {
    // U+1F600 is the surrogate pair D83D DE00: after U+00E9 but before U+FB01 in UTF-16 order, although its code
    // point is the larger of the two.
    assertThat(canonical("{\"\\ufb01\":1,\"\\ud83d\\ude00\":2,\"\\u00e9\":3,\"z\":4}"))
        .isEqualTo("{\"z\":4,\"\u00e9\":3,\"\ud83d\ude00\":2,\"\ufb01\":1}");
  }

  @Test
  void stringsEscapeOnlyQuotesBackslashesAndControlCharacters() throws Exception {
    assertThat(canonical("\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001 \\u001f \\u007f \\/ \\u00e9\""))
        .isEqualTo("\"q\\\" b\\\\ \\b\\f\\n\\r\\t \\u0001 \\u001f \u007f / \u00e9\"");
  }

  @Test
  void loneSurrogatesAreEscapedSoThatTwoOfThemStayDifferent() throws Exception {
    assertThat(canonical("\"\\ud800\"")).isEqualTo("\"\\ud800\"");
    assertThat(canonical("\"\\udc00x\"")).isEqualTo("\"\\udc00x\"");
    assertThat(canonical("\"\\ud83d\\ude00\"")).isEqualTo("\"\ud83d\ude00\"");
  }

  @Test
  void integersArePlainAndOtherNumbersAreTheDoubleTheyParseTo() throws Exception {
    assertThat(canonical("[0, -7, 12345678901234567890123, 1.5, 1.50, 1e2, true, false]"))
        .isEqualTo("[0,-7,12345678901234567890123,1.5,1.5,100.0,true,false]");
  }
}
