package dev.muster.lab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One lab run as its renderers see it: when it ran, its parameters and every scenario's {@link ScenarioResult}.
 * {@code output.txt} and {@code report.html} are both rendered from this; it is also kept as {@code results.json} in
 * the output directory, so a finished run's report can be rendered again without reading any text back.
 *
 * @param startedAt when the run was written, ISO-8601
 */
public record LabRun(String startedAt, LabParams params, List<ScenarioResult> results) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The file name under the output directory. */
  public static final String FILE = "results.json";

  public LabRun {
    results = List.copyOf(results);
  }

  public long passed() {
    return results.stream().filter(ScenarioResult::passed).count();
  }

  /** {@code TTL 3s, keepalive 1s, a call every 50ms, attempt timeout 300ms, ejection 2s, 1 retry}. */
  public String parametersLine() {
    return String.format("TTL %s, keepalive %s, a call every %s, attempt timeout %s, ejection %s, %d retry",
        LabParams.format(params.ttl()), LabParams.format(params.keepalive()),
        LabParams.format(params.callInterval()), LabParams.format(params.attemptTimeout()),
        LabParams.format(params.ejectionTime()), params.maxRetries());
  }

  /** Writes {@code DIR/results.json}. */
  public void write(Path dir) {
    ObjectNode root = JSON.createObjectNode().put("startedAt", startedAt);
    root.putObject("params").put("ttlMs", params.ttl().toMillis()).put("keepaliveMs", params.keepalive().toMillis())
        .put("callIntervalMs", params.callInterval().toMillis())
        .put("attemptTimeoutMs", params.attemptTimeout().toMillis())
        .put("ejectionTimeMs", params.ejectionTime().toMillis()).put("maxRetries", params.maxRetries());
    ArrayNode rows = root.putArray("results");
    for (ScenarioResult r : results) {
      ObjectNode row = rows.addObject().put("name", r.name()).put("passed", r.passed())
          .put("elapsedMs", r.elapsed().toMillis()).put("summary", r.figures().summary())
          .put("invariant", r.invariant()).put("seed", r.seed());
      ArrayNode windows = row.putArray("staleWindows");
      for (StaleWindow w : r.figures().staleWindows()) {
        windows.addObject().put("windowMs", w.windowMs()).put("leaseRemainderMs", w.leaseRemainderMs());
      }
      PerSecondChart chart = r.figures().perSecond();
      if (chart != null) {
        ObjectNode c = row.putObject("perSecond").put("y", chart.y()).put("x", chart.x());
        ArrayNode lines = c.putArray("lines");
        for (PerSecondChart.Line line : chart.lines()) {
          ArrayNode values = lines.addObject().put("label", line.label()).putArray("values");
          line.values().forEach(values::add);
        }
      }
    }
    try {
      Files.writeString(dir.resolve(FILE), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n",
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + dir.resolve(FILE) + ": " + e.getMessage(), e);
    }
  }

  /** Reads what {@link #write} wrote into {@code dir}. */
  public static LabRun read(Path dir) {
    JsonNode root;
    try {
      root = JSON.readTree(Files.readString(dir.resolve(FILE), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + dir.resolve(FILE) + ": " + e.getMessage(), e);
    }
    JsonNode p = root.path("params");
    LabParams params = new LabParams(ms(p, "ttlMs"), ms(p, "keepaliveMs"), ms(p, "callIntervalMs"),
        ms(p, "attemptTimeoutMs"), ms(p, "ejectionTimeMs"), p.path("maxRetries").asInt());
    List<ScenarioResult> results = new ArrayList<>();
    for (JsonNode r : root.path("results")) {
      List<StaleWindow> windows = new ArrayList<>();
      for (JsonNode w : r.path("staleWindows")) {
        JsonNode remainder = w.path("leaseRemainderMs");
        windows.add(new StaleWindow(w.path("windowMs").asLong(), remainder.isNumber() ? remainder.asLong() : null));
      }
      results.add(new ScenarioResult(r.path("name").asText(), r.path("passed").asBoolean(),
          new Figures(r.path("summary").asText(), windows, perSecond(r.path("perSecond"))),
          r.path("invariant").asText(), r.path("seed").asText(), Duration.ofMillis(r.path("elapsedMs").asLong())));
    }
    return new LabRun(root.path("startedAt").asText(), params, results);
  }

  private static PerSecondChart perSecond(JsonNode c) {
    if (!c.isObject()) {
      return null;
    }
    List<PerSecondChart.Line> lines = new ArrayList<>();
    for (JsonNode line : c.path("lines")) {
      List<Double> values = new ArrayList<>();
      for (JsonNode v : line.path("values")) {
        values.add(v.isNumber() ? v.asDouble() : null);
      }
      lines.add(new PerSecondChart.Line(line.path("label").asText(), values));
    }
    return new PerSecondChart(c.path("y").asText(), c.path("x").asText(), lines);
  }

  private static Duration ms(JsonNode node, String field) {
    return Duration.ofMillis(node.path(field).asLong());
  }
}
