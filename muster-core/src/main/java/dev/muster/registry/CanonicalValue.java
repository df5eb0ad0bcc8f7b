package dev.muster.registry;

import dev.muster.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The decoder's first and cheapest path: reads a value only if it is spelled exactly as {@link InstanceCodec#encode}
 * spells it, and returns null at the first byte that is not, so the Jackson paths of {@link ValueDecoder} decide.
 * One reader per value, confined to the calling thread.
 *
 * <p>The spelling: no whitespace; the members in the encoder's order, {@code schema} (a positive integer), {@code
 * address}, {@code port}, {@code state} (one of the three names), {@code weight}, {@code zone} and {@code region}
 * (each may be left out), {@code tags} (an array of strings), {@code metadata} (an object of strings, no key twice),
 * {@code registeredAt} (may be left out), and nothing after; strings without escapes or control characters; integers
 * of at most nine digits, no sign, no leading zero. Every value of that spelling is one JSON object that the tree
 * path reads to the same members, so accepting it here decides nothing the tree would decide differently; anything
 * else (an unknown member such as a signature, a null, an escape) is left to the Jackson paths.
 * {@code ValueDecoderEquivalenceTest} holds this path to the tree decoder.
 *
 * <p>Why by hand rather than with a library: Jackson's parser is the right tool for JSON in general, but building one
 * per value (the parser, its contexts, its duplicate detector's sets) was about half of what a PUT allocated, and
 * a registry value is almost always the encoder's own output. This reads that output in one pass over the bytes,
 * making only the strings, lists and map the instance keeps.
 */
final class CanonicalValue {
  /** The most tags or metadata entries read here; more (rare) go to the Jackson paths. */
  private static final int MAX_ENTRIES = 32;

  private static final byte[] SCHEMA = ascii("{\"schema\":");
  private static final byte[] ADDRESS = ascii(",\"address\":");
  private static final byte[] PORT = ascii(",\"port\":");
  private static final byte[] STATE = ascii(",\"state\":");
  private static final byte[] WEIGHT = ascii(",\"weight\":");
  private static final byte[] ZONE = ascii(",\"zone\":");
  private static final byte[] REGION = ascii(",\"region\":");
  private static final byte[] TAGS = ascii(",\"tags\":[");
  private static final byte[] METADATA = ascii(",\"metadata\":{");
  private static final byte[] REGISTERED_AT = ascii(",\"registeredAt\":");
  private static final byte[][] STATE_NAMES = {ascii("\"UP\""), ascii("\"STARTING\""), ascii("\"DRAINING\"")};
  private static final InstanceState[] STATES = {InstanceState.UP, InstanceState.STARTING, InstanceState.DRAINING};

  private final byte[] b;
  private int at;

  private CanonicalValue(byte[] value) {
    this.b = value;
  }

  /**
   * The instance {@code value} encodes under {@code key}, or null if the value is not in the encoder's spelling or
   * breaks an instance rule (the tree path then words the error). {@code value} must already be valid UTF-8 with no
   * NUL ({@link Utf8#isValid}), so a string's bytes can be taken whole up to its closing quote.
   */
  static Instance read(InstanceKey key, byte[] value) {
    return new CanonicalValue(value).read(key);
  }

  private Instance read(InstanceKey key) {
    if (!skip(SCHEMA) || integer() < 1 || !skip(ADDRESS)) {
      return null;
    }
    String address = string();
    if (address == null || !skip(PORT)) {
      return null;
    }
    int port = integer();
    InstanceState state = skip(STATE) ? state() : null;
    if (port < 0 || state == null || !skip(WEIGHT)) {
      return null;
    }
    int weight = integer();
    if (weight < 0) {
      return null;
    }
    String zone = null;
    String region = null;
    if ((skip(ZONE) && (zone = string()) == null) || (skip(REGION) && (region = string()) == null)
        || !skip(TAGS)) {
      return null;
    }
    List<String> tags = tags();
    Map<String, String> metadata = tags != null && skip(METADATA) ? metadata() : null;
    if (metadata == null) {
      return null;
    }
    Instant registeredAt = null;
    if ((skip(REGISTERED_AT) && (registeredAt = instant()) == null) || at != b.length - 1 || b[at] != '}') {
      return null;
    }
    try {
      return new Instance(key.id(), key.namespace(), key.service(), key.version(), address, port, state, weight,
          zone, region, tags, metadata, registeredAt);
    } catch (InvalidInputException e) {
      return null; // an instance rule: the tree path reports it
    }
  }

  /** Consumes {@code token} if the bytes at the cursor are exactly it. */
  private boolean skip(byte[] token) {
    if (b.length - at < token.length) {
      return false;
    }
    for (int i = 0; i < token.length; i++) {
      if (b[at + i] != token[i]) {
        return false;
      }
    }
    at += token.length;
    return true;
  }

  /** A non-negative integer of 1-9 digits without a leading zero, or -1. */
  private int integer() {
    int start = at;
    int value = 0;
    while (at < b.length && b[at] >= '0' && b[at] <= '9' && at - start < 9) {
      value = value * 10 + (b[at++] - '0');
    }
    int digits = at - start;
    boolean more = at < b.length && b[at] >= '0' && b[at] <= '9';
    return digits == 0 || more || (digits > 1 && b[start] == '0') ? -1 : value;
  }

  /** A string without escapes or control characters, or null. */
  private String string() {
    int end = stringEnd();
    if (end < 0) {
      return null;
    }
    String text = new String(b, at + 1, end - at - 1, StandardCharsets.UTF_8);
    at = end + 1;
    return text;
  }

  /** The index of the closing quote of the string at the cursor, or -1 if it is not a plain string. */
  private int stringEnd() {
    if (at >= b.length || b[at] != '"') {
      return -1;
    }
    for (int i = at + 1; i < b.length; i++) {
      int c = b[i] & 0xFF;
      if (c == '"') {
        return i;
      }
      if (c < 0x20 || c == '\\') {
        return -1;
      }
    }
    return -1;
  }

  private InstanceState state() {
    for (int i = 0; i < STATE_NAMES.length; i++) {
      if (skip(STATE_NAMES[i])) {
        return STATES[i];
      }
    }
    return null;
  }

  /** After '[': the strings up to ']', or null. One tag, the usual case, needs no list to grow. */
  private List<String> tags() {
    if (at < b.length && b[at] == ']') {
      at++;
      return List.of();
    }
    String first = null;
    List<String> more = null;
    do {
      String tag = string();
      if (tag == null) {
        return null;
      }
      if (first == null) {
        first = tag;
      } else {
        if (more == null) {
          more = new ArrayList<>(4);
          more.add(first);
        }
        if (more.size() == MAX_ENTRIES) {
          return null;
        }
        more.add(tag);
      }
    } while (at < b.length && b[at++] == ',');
    if (b[at - 1] != ']') {
      return null;
    }
    return more != null ? more : List.of(first);
  }

  /**
   * After '{': the string members up to '}', or null (also when a key comes twice: the tree path words that). One
   * entry, the usual case, is kept without a hash map.
   */
  private Map<String, String> metadata() {
    if (at < b.length && b[at] == '}') {
      at++;
      return Map.of();
    }
    String firstName = null;
    String firstValue = null;
    Map<String, String> more = null;
    do {
      String name = string();
      if (name == null || at >= b.length || b[at++] != ':') {
        return null;
      }
      String value = string();
      if (value == null) {
        return null;
      }
      if (firstName == null) {
        firstName = name;
        firstValue = value;
      } else {
        if (more == null) {
          more = new HashMap<>();
          more.put(firstName, firstValue);
        }
        if (more.size() == MAX_ENTRIES || more.put(name, value) != null) {
          return null;
        }
      }
    } while (at < b.length && b[at++] == ',');
    if (b[at - 1] != '}') {
      return null;
    }
    return more != null ? more : Map.of(firstName, firstValue);
  }

  /** A time string as the encoder writes it (fast) or as {@link Instant#parse} reads it; null if neither. */
  private Instant instant() {
    int end = stringEnd();
    if (end < 0) {
      return null;
    }
    Instant instant = Rfc3339.parseCanonical(b, at + 1, end);
    if (instant == null) {
      try {
        instant = Instant.parse(new String(b, at + 1, end - at - 1, StandardCharsets.UTF_8));
      } catch (DateTimeParseException e) {
        return null;
      }
    }
    at = end + 1;
    return instant;
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
