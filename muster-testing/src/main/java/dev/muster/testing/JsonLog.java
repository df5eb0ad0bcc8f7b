package dev.muster.testing;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A JSON-lines log ({@code muster ... --json}, a provider's registration events, the lab's own marks) as it stands
 * when read. The one rule for every reader: a line that starts with <code>{</code> and parses is an entry; one that
 * starts with <code>{</code> but does not parse is the line still being written and is skipped (the next read sees it
 * whole); any other line is kept apart in {@link #otherLines()}, so a caller that expects JSON only can say so.
 *
 * <p>Timestamps are the {@code ts} fields: RFC 3339 UTC with exactly six fractional digits ({@link #ts(Instant)}), so
 * lines of different processes sort and subtract alike. Immutable.
 */
public final class JsonLog {
  private static final Set<String> VERDICTS = Set.of("probe_down", "probe_up", "panic_on", "panic_off");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final DateTimeFormatter TS =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  private final List<JsonNode> lines;
  private final List<String> otherLines;

  private JsonLog(List<JsonNode> lines, List<String> otherLines) {
    this.lines = List.copyOf(lines);
    this.otherLines = List.copyOf(otherLines);
  }

  /**
   * The log in {@code file}; a file that does not exist yet is an empty log. A character still being written at the
   * end (half a UTF-8 sequence) is read as U+FFFD in that last line, never an error.
   */
  public static JsonLog read(Path file) {
    return new JsonLogFollower(file).read();
  }

  /** The log made of {@code text}'s lines. */
  public static JsonLog parse(List<String> text) {
    List<JsonNode> lines = new ArrayList<>();
    List<String> other = new ArrayList<>();
    for (String line : text) {
      classify(line, lines, other);
    }
    return new JsonLog(lines, other);
  }

  static JsonLog of(List<JsonNode> lines, List<String> otherLines) {
    return new JsonLog(lines, otherLines);
  }

  /** Adds {@code line} to {@code lines} or {@code other}, or to neither, by the class comment's rule. */
  static void classify(String line, List<JsonNode> lines, List<String> other) {
    if (line.startsWith("{")) {
      try {
        lines.add(JSON.readTree(line));
      } catch (IOException beingWritten) {
        // skipped: see the class comment
      }
    } else if (!line.isBlank()) {
      other.add(line);
    }
  }

  /** Every entry, in the order written. */
  public List<JsonNode> lines() {
    return lines;
  }

  /** Non-blank lines that are not JSON objects (a banner, a stack trace), in the order written. */
  public List<String> otherLines() {
    return otherLines;
  }

  /** The entries whose {@code event} is {@code event}. */
  public List<JsonNode> events(String event) {
    return lines.stream().filter(n -> event.equals(n.path("event").asText())).toList();
  }

  /** The {@code event} field of every entry, in order. */
  public List<String> eventNames() {
    return lines.stream().map(n -> n.path("event").asText()).toList();
  }

  public boolean has(String event) {
    return lines.stream().anyMatch(n -> event.equals(n.path("event").asText()));
  }

  public Optional<JsonNode> first(Predicate<JsonNode> p) {
    return lines.stream().filter(p).findFirst();
  }

  /** The first entry whose {@code event} is {@code event}. */
  public Optional<JsonNode> firstEvent(String event) {
    return first(n -> event.equals(n.path("event").asText()));
  }

  /**
   * Whether a consumer's probes have settled by {@code now}: no endpoint probed down (a {@code probe_down} without a
   * later {@code probe_up}), and no probe or panic verdict for {@code quiet}, counting its first line (the first set)
   * as one, so that it has also probed for that long. A consumer's first probes, while its JVM starts beside others on
   * two cores, can time out against a healthy provider; a fault started then meets a consumer already routing around
   * one. False for an empty log.
   */
  public boolean probesSettled(Duration quiet, Instant now) {
    if (lines.isEmpty()) {
      return false;
    }
    Map<String, String> lastVerdict = new HashMap<>();
    Instant lastEvent = ts(lines.get(0));
    for (JsonNode n : lines) {
      String event = n.path("event").asText();
      if (VERDICTS.contains(event)) {
        lastEvent = ts(n);
        if (n.has("instance")) {
          lastVerdict.put(n.path("instance").asText(), event);
        }
      }
    }
    return !lastVerdict.containsValue("probe_down") && Duration.between(lastEvent, now).compareTo(quiet) >= 0;
  }

  /** An entry's {@code ts}. */
  public static Instant ts(JsonNode line) {
    return Instant.parse(line.path("ts").asText());
  }

  /** {@code 2026-11-29T21:30:01.123456Z}: UTC, microseconds, always six digits (SPEC §7). */
  public static String ts(Instant instant) {
    return TS.format(instant);
  }

  /** The ids in a {@code watch --json} entry's instance list. */
  public static List<String> ids(JsonNode watchLine) {
    List<String> ids = new ArrayList<>();
    watchLine.path("instances").forEach(i -> ids.add(i.path("id").asText()));
    return ids;
  }

  /** {@code node} as one JSON line, without the newline. */
  public static String line(JsonNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot write " + node + " as JSON: " + e.getMessage(), e);
    }
  }

  /** A new entry whose first fields are {@code event} and {@code ts}, for a process writing its own log. */
  public static com.fasterxml.jackson.databind.node.ObjectNode entry(String event, Instant ts) {
    var node = JSON.createObjectNode();
    node.put("event", event);
    node.put("ts", ts(ts));
    return node;
  }
}
