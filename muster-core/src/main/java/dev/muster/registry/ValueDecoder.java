package dev.muster.registry;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import dev.muster.InvalidInputException;
import dev.muster.MalformedValueException;
import dev.muster.internal.Json;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes one registry value (see {@link InstanceCodec} for the rules). One decoder per value: it carries the key
 * so every failure can name it. Not thread-safe; confined to the calling thread.
 *
 * <p>Three paths, one set of rules. The <b>canonical path</b> ({@link CanonicalValue}) reads only the encoder's own
 * spelling, by hand, in one pass over the bytes. The <b>streaming path</b> reads any spelling once with Jackson's
 * parser, straight into the fields of an {@link Instance}: no tree, no intermediate map, no copy of the value as a
 * {@code String}. Both only ever accept: at the first thing that is not a well-formed value of the expected shape (a
 * wrong type, a duplicated field, trailing tokens, a parse error, bad UTF-8; for the canonical path also any other
 * spelling) they give up and the next path decides, the last being the <b>tree path</b>, which is the one that
 * words every error. So a value a fast path accepts is one the tree path accepts, decoded to an equal instance
 * ({@code ValueDecoderEquivalenceTest} holds the three together over the codec's cases and tens of thousands of
 * mutated values), and every failure reads exactly as it always has. Every PUT a cache applies is decoded here, on
 * the cache's loop thread, so this is where a cache's events-per-second are won or lost.
 */
final class ValueDecoder {
  /**
   * The streaming path's parser factory: {@link Json#MAPPER}'s settings but without Jackson's duplicate detection,
   * which keeps a hash set per object; the path finds duplicates itself (a bit per known field, a short list for
   * the others) and gives up at one, so the tree words it as before. Thread-safe, shared.
   */
  private static final JsonFactory UNCHECKED = JsonFactory.builder()
      .disable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();
  private static final List<String> KNOWN = List.of("schema", "address", "port", "state", "weight", "zone",
      "region", "tags", "metadata", "registeredAt");
  /** More names than this in one unknown object (rare) and the tree decides. */
  private static final int MAX_CHECKED_NAMES = 32;

  private final InstanceKey key;

  ValueDecoder(InstanceKey key) {
    this.key = key;
  }

  Instance decode(byte[] value) {
    return decode(value, null);
  }

  /** As {@link #decode(byte[])}; the canonical path shares {@code same}'s equal parts (may be null). */
  Instance decode(byte[] value, Instance same) {
    if (value != null && value.length > 0 && value.length <= InstanceCodec.MAX_VALUE_BYTES && Utf8.isValid(value)) {
      Instance fast = CanonicalValue.read(key, value, same);
      if (fast == null) {
        fast = streaming(value);
      }
      if (fast != null) {
        return fast;
      }
    }
    return tree(value);
  }

  /**
   * The instance, or null when the value is anything but a well-formed object of the expected shape: then {@link
   * #tree} decides (and words the error). Never throws for a bad value.
   */
  Instance streaming(byte[] value) {
    String address = null;
    int port = -1;
    InstanceState state = InstanceState.UP;
    int weight = Instance.DEFAULT_WEIGHT;
    String zone = null;
    String region = null;
    List<String> tags = List.of();
    Map<String, String> metadata = Map.of();
    Instant registeredAt = null;
    int seen = 0; // a bit per known field, to find one given twice
    List<String> unknown = null;
    try (JsonParser p = UNCHECKED.createParser(value)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return null;
      }
      for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
        String field = p.currentName();
        int bit = KNOWN.indexOf(field);
        if (bit >= 0 && (seen & (1 << bit)) != 0) {
          return null; // a duplicated field
        }
        seen |= bit >= 0 ? 1 << bit : 0;
        JsonToken v = p.nextToken();
        boolean isNull = v == JsonToken.VALUE_NULL;
        switch (field) {
          case "schema" -> {
            if (!isNull && (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT
                || p.getIntValue() < 1)) {
              return null;
            }
          }
          case "address" -> {
            if (v != JsonToken.VALUE_STRING) {
              return null;
            }
            address = p.getText();
          }
          case "port" -> {
            if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
              return null;
            }
            port = p.getIntValue();
          }
          case "state" -> {
            if (isNull) {
              state = InstanceState.UP;
            } else if (v != JsonToken.VALUE_STRING || (state = stateNamed(p.getText())) == null) {
              return null;
            }
          }
          case "weight" -> {
            if (isNull) {
              weight = Instance.DEFAULT_WEIGHT;
            } else if (v != JsonToken.VALUE_NUMBER_INT || p.getNumberType() != JsonParser.NumberType.INT) {
              return null;
            } else {
              weight = p.getIntValue();
            }
          }
          case "zone", "region" -> {
            if (!isNull && v != JsonToken.VALUE_STRING) {
              return null;
            }
            String text = isNull ? null : p.getText();
            if (field.equals("zone")) {
              zone = text;
            } else {
              region = text;
            }
          }
          case "tags" -> {
            if (isNull) {
              tags = List.of();
            } else if (v != JsonToken.START_ARRAY || (tags = streamedTags(p)) == null) {
              return null;
            }
          }
          case "metadata" -> {
            if (isNull) {
              metadata = Map.of();
            } else if (v != JsonToken.START_OBJECT || (metadata = streamedMetadata(p)) == null) {
              return null;
            }
          }
          case "registeredAt" -> {
            if (isNull) {
              registeredAt = null;
            } else if (v != JsonToken.VALUE_STRING) {
              return null;
            } else {
              registeredAt = Instant.parse(p.getText());
            }
          }
          default -> { // unknown fields (a later schema's, the signature) are ignored, once each
            if (unknown == null) {
              unknown = new ArrayList<>(2);
            }
            if (!addOnce(unknown, field) || !skipChecked(p, v)) {
              return null;
            }
          }
        }
      }
      if (p.currentToken() != JsonToken.END_OBJECT || p.nextToken() != null || address == null || port < 0) {
        return null;
      }
    } catch (java.io.IOException | DateTimeParseException | IllegalArgumentException e) {
      return null; // a parse error, a duplicated field, a bad time: the tree path words it
    }
    try {
      return new Instance(key.id(), key.namespace(), key.service(), key.version(), address, port, state, weight,
          zone, region, tags, metadata, registeredAt);
    } catch (InvalidInputException e) {
      return null; // the instance rules: the tree path reports the same rule
    }
  }

  /**
   * After {@code v}, the first token of a value: skips the value, false if an object in it has a name twice (which
   * Jackson's duplicate detection, off for the streaming path, would have refused) or it is too large to check.
   */
  private static boolean skipChecked(JsonParser p, JsonToken v) throws java.io.IOException {
    if (v == JsonToken.START_ARRAY) {
      for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
        if (t == null || !skipChecked(p, t)) {
          return false;
        }
      }
    } else if (v == JsonToken.START_OBJECT) {
      List<String> names = new ArrayList<>(4);
      for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
        if (!addOnce(names, p.currentName()) || !skipChecked(p, p.nextToken())) {
          return false;
        }
      }
      return p.currentToken() == JsonToken.END_OBJECT;
    }
    return v != null;
  }

  /** Adds {@code name} unless it is there already (false) or there are too many to compare one by one (false). */
  private static boolean addOnce(List<String> names, String name) {
    if (names.size() == MAX_CHECKED_NAMES || names.contains(name)) {
      return false;
    }
    names.add(name);
    return true;
  }

  private static InstanceState stateNamed(String text) {
    for (InstanceState state : InstanceState.values()) {
      if (state.name().equals(text)) {
        return state;
      }
    }
    return null;
  }

  /** After START_ARRAY: the strings up to END_ARRAY, or null at anything else. */
  private static List<String> streamedTags(JsonParser p) throws java.io.IOException {
    List<String> tags = new ArrayList<>(4);
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t != JsonToken.VALUE_STRING) {
        return null;
      }
      tags.add(p.getText());
    }
    return tags;
  }

  /** After START_OBJECT: the string-valued fields up to END_OBJECT, or null at anything else (a name twice too). */
  private static Map<String, String> streamedMetadata(JsonParser p) throws java.io.IOException {
    Map<String, String> metadata = new LinkedHashMap<>();
    for (JsonToken t = p.nextToken(); t == JsonToken.FIELD_NAME; t = p.nextToken()) {
      String name = p.currentName();
      if (p.nextToken() != JsonToken.VALUE_STRING || metadata.put(name, p.getText()) != null) {
        return null;
      }
    }
    return p.currentToken() == JsonToken.END_OBJECT ? metadata : null;
  }

  /** The reference decoder: a Jackson tree, every rule checked and every failure worded. */
  Instance tree(byte[] value) {
    JsonNode root = parse(value);
    JsonNode schema = root.get("schema");
    if (schema != null && !schema.isNull() && !(schema.isIntegralNumber() && schema.canConvertToInt()
        && schema.intValue() >= 1)) {
      throw bad("schema", schema, "expected a positive integer");
    }
    String address = text(root, "address", true);
    int port = integer(root, "port", null, "expected an integer 1-65535");
    InstanceState state = state(root);
    int weight = integer(root, "weight", Instance.DEFAULT_WEIGHT, "expected an integer 0-" + Instance.MAX_WEIGHT);
    String zone = text(root, "zone", false);
    String region = text(root, "region", false);
    List<String> tags = tags(root);
    Map<String, String> metadata = metadata(root);
    Instant registeredAt = instant(root, "registeredAt");
    try {
      return new Instance(key.id(), key.namespace(), key.service(), key.version(), address, port, state, weight,
          zone, region, tags, metadata, registeredAt);
    } catch (InvalidInputException e) {
      throw new MalformedValueException(key.path(), e.getMessage(), e);
    }
  }

  private JsonNode parse(byte[] value) {
    if (value == null || value.length == 0) {
      throw new MalformedValueException(key.path(), "empty, expected a JSON object");
    }
    if (value.length > InstanceCodec.MAX_VALUE_BYTES) {
      throw new MalformedValueException(key.path(),
          "too large: " + value.length + " bytes > " + InstanceCodec.MAX_VALUE_BYTES);
    }
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(value))
          .toString();
    } catch (CharacterCodingException e) {
      throw new MalformedValueException(key.path(), "not UTF-8 text", e);
    }
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      JsonLocation at = e.getLocation();
      String position = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
      throw new MalformedValueException(key.path(), "not JSON: " + e.getOriginalMessage() + position, e);
    }
    if (root == null || root.isMissingNode()) {
      throw new MalformedValueException(key.path(), "empty, expected a JSON object");
    }
    if (!root.isObject()) {
      throw new MalformedValueException(key.path(), "not a JSON object but " + Json.kind(root));
    }
    return root;
  }

  private String text(JsonNode root, String field, boolean required) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      if (required) {
        throw missing(field);
      }
      return null;
    }
    if (!node.isTextual()) {
      throw bad(field, node, "expected a string");
    }
    return node.textValue();
  }

  private int integer(JsonNode root, String field, Integer absent, String expected) {
    JsonNode node = root.get(field);
    if (node == null || node.isNull()) {
      if (absent == null) {
        throw missing(field);
      }
      return absent;
    }
    if (!node.isIntegralNumber() || !node.canConvertToInt()) {
      throw bad(field, node, expected);
    }
    return node.intValue();
  }

  private InstanceState state(JsonNode root) {
    String text = text(root, "state", false);
    if (text == null) {
      return InstanceState.UP;
    }
    for (InstanceState state : InstanceState.values()) {
      if (state.name().equals(text)) {
        return state;
      }
    }
    throw bad("state", root.get("state"), "expected \"UP\", \"STARTING\" or \"DRAINING\"");
  }

  private List<String> tags(JsonNode root) {
    JsonNode node = root.get("tags");
    if (node == null || node.isNull()) {
      return List.of();
    }
    if (!node.isArray()) {
      throw bad("tags", node, "expected an array of strings");
    }
    List<String> tags = new ArrayList<>(node.size());
    for (JsonNode element : node) {
      if (!element.isTextual()) {
        throw bad("tags", element, "expected an array of strings");
      }
      tags.add(element.textValue());
    }
    return tags;
  }

  private Map<String, String> metadata(JsonNode root) {
    JsonNode node = root.get("metadata");
    if (node == null || node.isNull()) {
      return Map.of();
    }
    if (!node.isObject()) {
      throw bad("metadata", node, "expected an object of string values");
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> entry : node.properties()) {
      if (!entry.getValue().isTextual()) {
        throw bad("metadata." + entry.getKey(), entry.getValue(), "expected a string");
      }
      metadata.put(entry.getKey(), entry.getValue().textValue());
    }
    return metadata;
  }

  private Instant instant(JsonNode root, String field) {
    String text = text(root, field, false);
    if (text == null) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      throw bad(field, root.get(field), "expected an RFC 3339 time such as 2026-11-29T10:00:00Z");
    }
  }

  private MalformedValueException missing(String field) {
    return new MalformedValueException(key.path(), "field \"" + field + "\" is missing");
  }

  private MalformedValueException bad(String field, JsonNode value, String expected) {
    return new MalformedValueException(key.path(),
        "field \"" + field + "\" has bad value " + Json.show(value) + ": " + expected);
  }
}
