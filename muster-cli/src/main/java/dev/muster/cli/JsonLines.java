package dev.muster.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.testing.JsonLog;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Instant;

/**
 * The {@code --json} output format (SPEC §7): one JSON object per line, each with an {@code "event"} field and a
 * {@code "ts"} in RFC 3339 UTC with exactly six fractional digits (microseconds), so lines from different
 * processes sort and subtract the same way ({@link JsonLog#ts(Instant)}: the one format the lab, the bench and the
 * tests read back). Stateless; the mapper is configured once and shared.
 */
final class JsonLines {
  private static final JsonMapper MAPPER = JsonMapper.builder().build();

  private JsonLines() {}

  /** A new object whose first fields are {@code event} and {@code ts}. */
  static ObjectNode event(String event, Instant ts) {
    ObjectNode node = MAPPER.createObjectNode();
    node.put("event", event);
    node.put("ts", ts(ts));
    return node;
  }

  /** {@code 2026-11-29T21:30:01.123456Z}: UTC, microseconds, always six digits. */
  static String ts(Instant instant) {
    return JsonLog.ts(instant);
  }

  /**
   * Writes {@code node} as one line and flushes, so a reader of a pipe sees each event as it happens. Synchronized
   * on {@code out} because registration events may come from a pool thread, the caller and a shutdown hook.
   */
  static void print(PrintWriter out, ObjectNode node) {
    String line;
    try {
      line = MAPPER.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
    synchronized (out) {
      out.println(line);
      out.flush();
    }
  }
}
