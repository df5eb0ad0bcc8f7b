package dev.muster.registry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link Rfc3339#parseCanonical} returns exactly what {@link Instant#parse} returns, or null (then the caller asks
 * {@code Instant.parse}); never an instant {@code Instant.parse} would refuse. Over hand-picked times, 200,000 random
 * instants as the encoder writes them, and 200,000 mutations of those.
 */
class Rfc3339Test {
  private static final long YEAR_0 = Instant.parse("0000-01-01T00:00:00Z").getEpochSecond();
  private static final long YEAR_10000 = Instant.parse("+10000-01-01T00:00:00Z").getEpochSecond();

  @Test
  void handPickedTimesAgreeWithInstantParse() {
    List<String> times = List.of("2026-11-29T10:00:00Z", "2026-11-29T10:00:00.123Z", "2026-11-29T10:00:00.1Z",
        "2026-11-29T10:00:00.123456789Z", "2026-11-29T10:00:00.1234567891Z", "2026-11-29T10:00:00.Z",
        "1970-01-01T00:00:00Z", "1969-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z",
        "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z",
        "2026-02-30T00:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
        "2026-01-00T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T23:60:00Z", "2026-12-31T23:59:60Z",
        "2026-01-01t00:00:00Z", "2026-01-01T00:00:00z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00Z",
        "+2026-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "+10000-01-01T00:00:00Z", "2026-1-01T00:00:00Z",
        "2026-01-01 00:00:00Z", "2026-01-01T00:00:00,5Z", "yesterday", "");
    int fast = 0;
    for (String time : times) {
      if (assertAgrees(time)) {
        fast++;
      }
    }
    assertThat(fast).as("hand-picked times on the fast path").isEqualTo(10);
  }

  @Test
  void randomInstantsAsTheEncoderWritesThemTakeTheFastPathAndAgree() {
    SplittableRandom random = new SplittableRandom(3339);
    for (int i = 0; i < 200_000; i++) {
      Instant instant = Instant.ofEpochSecond(random.nextLong(YEAR_0, YEAR_10000), nanos(random));
      String text = instant.toString();
      assertThat(assertAgrees(text)).as("the fast path took %s", text).isTrue();
    }
  }

  @Test
  void mutatedTimesAgreeWithInstantParse() {
    SplittableRandom random = new SplittableRandom(20_260_229);
    String alphabet = "0123456789-:.TZtz+ 9";
    int fast = 0;
    for (int i = 0; i < 200_000; i++) {
      StringBuilder b = new StringBuilder(
          Instant.ofEpochSecond(random.nextLong(YEAR_0, YEAR_10000), nanos(random)).toString());
      int edits = 1 + random.nextInt(2);
      for (int e = 0; e < edits; e++) {
        int at = random.nextInt(b.length());
        char c = alphabet.charAt(random.nextInt(alphabet.length()));
        switch (random.nextInt(3)) {
          case 0 -> b.setCharAt(at, c);
          case 1 -> b.insert(at, c);
          default -> b.deleteCharAt(at);
        }
      }
      if (assertAgrees(b.toString())) {
        fast++;
      }
    }
    assertThat(fast).as("mutations still on the fast path (some must be, or this tests little)")
        .isGreaterThan(10_000);
  }

  private static int nanos(SplittableRandom random) {
    return switch (random.nextInt(4)) {
      case 0 -> 0;
      case 1 -> random.nextInt(1000) * 1_000_000;
      case 2 -> random.nextInt(1_000_000) * 1000;
      default -> random.nextInt(1_000_000_000);
    };
  }

  /** Whether the fast path took {@code text}; fails if it returned anything but what Instant.parse does. */
  private static boolean assertAgrees(String text) {
    byte[] b = ("\"" + text + "\"").getBytes(UTF_8); // offsets inside a larger array, as the decoder passes them
    Instant fast = Rfc3339.parseCanonical(b, 1, b.length - 1);
    if (fast == null) {
      return false;
    }
    Instant expected;
    try {
      expected = Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw new AssertionError("the fast path accepted " + text + " as " + fast + "; Instant.parse refuses it", e);
    }
    assertThat(fast).as("the fast path on %s", text).isEqualTo(expected);
    return true;
  }
}
