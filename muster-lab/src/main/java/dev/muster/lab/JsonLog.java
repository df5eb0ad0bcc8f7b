package dev.muster.lab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * A process's JSON-lines log as it stands when read: every line that parses as a JSON object (a partial last line
 * is skipped). Timestamps are the {@code ts} fields, RFC 3339 with microseconds, wall clock.
 */
public final class JsonLog {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<JsonNode> lines;

  private JsonLog(List<JsonNode> lines) {
    this.lines = lines;
  }

  public static JsonLog read(Path file) {
    List<JsonNode> out = new ArrayList<>();
    if (!Files.exists(file)) {
      return new JsonLog(out);
    }
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (line.startsWith("{")) {
          try {
            out.add(JSON.readTree(line));
          } catch (IOException e) {
            // a line being written; the next read sees it whole
          }
        }
      }
    } catch (IOException e) {
      throw new LabException("cannot read " + file + ": " + e.getMessage());
    }
    return new JsonLog(out);
  }

  public List<JsonNode> lines() {
    return lines;
  }

  public List<JsonNode> events(String event) {
    return lines.stream().filter(n -> event.equals(n.path("event").asText())).toList();
  }

  public boolean has(String event) {
    return lines.stream().anyMatch(n -> event.equals(n.path("event").asText()));
  }

  public Optional<JsonNode> first(Predicate<JsonNode> p) {
    return lines.stream().filter(p).findFirst();
  }

  public static Instant ts(JsonNode n) {
    return Instant.parse(n.path("ts").asText());
  }

  /** The ids in a {@code watch --json} line's instance list. */
  public static List<String> ids(JsonNode watchLine) {
    List<String> ids = new ArrayList<>();
    watchLine.path("instances").forEach(i -> ids.add(i.path("id").asText()));
    return ids;
  }
}
