package dev.muster.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The one Jackson mapper for registry values (the codec reads them, signatures are checked on them), configured
 * once and never changed afterwards (so it is safe to share). Strict on structure: a duplicated field or anything
 * after the top-level value is an error, because a value that two readers could understand differently must not be
 * accepted by either.
 */
public final class Json {
  public static final JsonMapper MAPPER = JsonMapper.builder(JsonFactory.builder()
          // One pool of buffers for all threads, not Jackson's default of one set per thread in a ThreadLocal:
          // every registration has its own thread, and each kept 18 KB of buffers for life (the bench's memory
          // section: 20.8 KB per registration, 18,048 B of it Jackson's BufferRecycler).
          .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
          .build())
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .build();

  private static final int MAX_SHOWN_CHARS = 100;

  private Json() {}

  /** The node as JSON text for a message, cut after a hundred characters. */
  public static String show(JsonNode node) {
    String text = node.toString();
    return text.length() <= MAX_SHOWN_CHARS ? text : text.substring(0, MAX_SHOWN_CHARS) + "...";
  }

  /**
   * {@code text} as a JSON string for a message or a log line: quoted, every control character escaped (a key from
   * etcd holding a line feed cannot forge a log line), cut after a hundred characters.
   */
  public static String show(String text) {
    return show(com.fasterxml.jackson.databind.node.TextNode.valueOf(text));
  }

  /** "a string", "an array", ... for messages. */
  public static String kind(JsonNode node) {
    return switch (node.getNodeType()) {
      case ARRAY -> "an array";
      case OBJECT -> "an object";
      case STRING -> "a string";
      case NUMBER -> "a number";
      case BOOLEAN -> "a boolean";
      case NULL -> "null";
      default -> "a " + node.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    };
  }
}
