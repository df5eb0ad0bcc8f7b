package dev.muster.registry;

import dev.muster.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
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
 *
 * <p>An update mostly repeats the value it replaces (a weight or a state changes, the rest stays). Given the instance
 * the key held before ({@code same}), each string, the tag list, the metadata map and the time that spell exactly
 * what it holds are taken from it instead of being made again: the bytes are compared with what it holds, which
 * allocates nothing. Those objects are immutable, so sharing them changes nothing a reader can see.
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
  private final Instance same;
  private int at;

  private CanonicalValue(byte[] value, Instance same) {
    this.b = value;
    this.same = same;
  }

  /**
   * The instance {@code value} encodes under {@code key}, or null if the value is not in the encoder's spelling or
   * breaks an instance rule (the tree path then words the error). {@code value} must already be valid UTF-8 with no
   * NUL ({@link Utf8#isValid}), so a string's bytes can be taken whole up to its closing quote. {@code same}: the
   * instance the key held before, whose equal parts are shared (see the class comment), or null.
   */
  static Instance read(InstanceKey key, byte[] value, Instance same) {
    return new CanonicalValue(value, same).read(key);
  }

  private Instance read(InstanceKey key) {
    if (!skip(SCHEMA) || integer() < 1 || !skip(ADDRESS)) {
      return null;
    }
    String address = string(same == null ? null : same.address());
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
    if ((skip(ZONE) && (zone = string(same == null ? null : same.zone())) == null)
        || (skip(REGION) && (region = string(same == null ? null : same.region())) == null) || !skip(TAGS)) {
      return null;
    }
    List<String> tags = tags(same == null ? null : same.tags());
    Map<String, String> metadata = tags != null && skip(METADATA) ? metadata(same == null ? null : same.metadata())
        : null;
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

  /** A string without escapes or control characters, or null; {@code shared} itself if it is what the bytes spell. */
  private String string(String shared) {
    int end = stringEnd();
    if (end < 0) {
      return null;
    }
    String text = spells(at + 1, end, shared) ? shared : new String(b, at + 1, end - at - 1, StandardCharsets.UTF_8);
    at = end + 1;
    return text;
  }

  /** Whether {@code b[from, to)} is {@code text} in UTF-8; compared only when both are ASCII (false otherwise). */
  private boolean spells(int from, int to, String text) {
    if (text == null || text.length() != to - from) {
      return false;
    }
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0x80 || b[from + i] != c) {
        return false;
      }
    }
    return true;
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

  /**
   * After '[': the strings up to ']', or null. One tag, the usual case, needs no list to grow; {@code shared} itself
   * (may be null) if it holds exactly those tags in that order.
   */
  private List<String> tags(List<String> shared) {
    if (at < b.length && b[at] == ']') {
      at++;
      return List.of();
    }
    String first = null;
    List<String> more = null;
    int count = 0;
    boolean asShared = shared != null;
    do {
      String hint = asShared && count < shared.size() ? shared.get(count) : null;
      String tag = string(hint);
      if (tag == null) {
        return null;
      }
      asShared &= tag == hint;
      count++;
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
    if (asShared && count == shared.size()) {
      return shared;
    }
    return more != null ? more : List.of(first);
  }

  /**
   * After '{': the string members up to '}', or null (also when a key comes twice: the tree path words that). One
   * entry, the usual case, is kept without a hash map; {@code shared} itself (may be null) if it holds exactly those
   * members. The encoder writes an instance's metadata in its map's order, so the members are compared with {@code
   * shared}'s in that order.
   */
  private Map<String, String> metadata(Map<String, String> shared) {
    if (at < b.length && b[at] == '}') {
      at++;
      return Map.of();
    }
    String firstName = null;
    String firstValue = null;
    Map<String, String> more = null;
    int count = 0;
    Iterator<Map.Entry<String, String>> hints =
        shared == null || shared.isEmpty() ? null : shared.entrySet().iterator();
    boolean asShared = hints != null;
    do {
      Map.Entry<String, String> hint = asShared && hints.hasNext() ? hints.next() : null;
      String name = string(hint == null ? null : hint.getKey());
      if (name == null || at >= b.length || b[at++] != ':') {
        return null;
      }
      String value = string(hint == null ? null : hint.getValue());
      if (value == null) {
        return null;
      }
      asShared &= hint != null && name == hint.getKey() && value == hint.getValue();
      count++;
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
    if (asShared && count == shared.size()) {
      return shared;
    }
    return more != null ? more : Map.of(firstName, firstValue);
  }

  /** A time string as the encoder writes it (fast) or as {@link Instant#parse} reads it; null if neither. */
  private Instant instant() {
    int end = stringEnd();
    if (end < 0) {
      return null;
    }
    Instant instant = Rfc3339.parseCanonical(b, at + 1, end, same == null ? null : same.registeredAt());
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
