package dev.muster.lab.report;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.lab.Fleet;
import dev.muster.lab.LabException;
import dev.muster.lab.LabRun;
import dev.muster.lab.ScenarioResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * {@code report.html}: one self-contained page (Chart.js inlined, no network) rendered from a {@link LabRun} — its
 * results for the header, the table, the stale-window and per-second charts — and from the lab output directory: each
 * scenario's {@code *.jsonl} logs for the timelines, {@code env.txt} at the bottom. A finished run can be rendered
 * again from its directory ({@code results.json}): {@code java -cp muster.jar dev.muster.lab.report.LabReportPage
 * OUT}.
 */
public final class LabReportPage {
  static final String CHART_JS = "/META-INF/resources/webjars/chart.js/4.4.1/dist/chart.umd.js";
  private static final ObjectMapper JSON = new ObjectMapper();

  private LabReportPage() {}

  /** Writes {@code OUT/report.html} for the output directory given as the only argument. */
  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: LabReportPage LAB_OUTPUT_DIR");
      System.exit(2);
    }
    Path out = Path.of(args[0]);
    Path file = out.resolve("report.html");
    Files.writeString(file, html(LabRun.read(out), out), StandardCharsets.UTF_8);
    System.out.println("wrote " + file);
  }

  /** The page for {@code run}, whose scenario logs are in the lab output directory {@code out}. */
  public static String html(LabRun run, Path out) {
    StringBuilder h = new StringBuilder(300_000);
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Muster lab report</title>\n")
        .append("<style>").append(CSS).append("</style>\n")
        .append("<script>/* Chart.js 4.4.1, MIT License, https://www.chartjs.org */\n").append(chartJs())
        .append("\n</script></head><body>\n");
    h.append("<header><h1>Muster lab report</h1>\n<p>run: ").append(esc(run.startedAt())).append("<br>parameters: ")
        .append(esc(run.parametersLine())).append("</p>\n<p class=\"summary\">").append(run.passed())
        .append(" of ").append(run.results().size()).append(" scenarios passed</p></header>\n");
    table(h, run);

    ArrayNode scenarios = JSON.createArrayNode();
    for (ScenarioResult r : run.results()) {
      Optional<ObjectNode> data = ScenarioCharts.build(JSON, r.name(), out.resolve(r.name()), r.figures());
      data.ifPresent(d -> scenarios.add(d.put("id", "s" + scenarios.size())));
      section(h, r.name(), data);
    }

    h.append("<section><h2>Environment (env.txt)</h2><pre>").append(esc(read(out.resolve("env.txt"))))
        .append("</pre><p class=\"caption\">What the figures do not prove: <code>LIMITS.md</code> next to this "
            + "file.</p></section>\n");
    ObjectNode data = JSON.createObjectNode();
    data.set("scenarios", scenarios);
    h.append("<script type=\"application/json\" id=\"muster-data\">").append(scriptSafe(toJson(data)))
        .append("</script>\n<script>\n").append(ReportScript.JS).append("</script>\n</body></html>\n");
    return h.toString();
  }

  private static void table(StringBuilder h, LabRun run) {
    h.append("<table><thead><tr><th>scenario</th><th>result</th><th>took</th><th>our figures</th>"
        + "<th>the seed's figures</th><th>invariant</th></tr></thead><tbody>\n");
    for (ScenarioResult r : run.results()) {
      h.append("<tr><td><a href=\"#").append(esc(r.name())).append("\">").append(esc(r.name()))
          .append("</a></td><td class=\"").append(r.passed() ? "pass\">PASS" : "fail\">FAIL").append("</td><td>")
          .append(String.format(java.util.Locale.ROOT, "%.1f", r.elapsed().toMillis() / 1000.0)).append(" s</td><td>")
          .append(esc(r.figures().summary())).append("</td><td>")
          .append(esc(r.seed())).append("</td><td>").append(esc(r.invariant())).append("</td></tr>\n");
    }
    h.append("</tbody></table>\n");
  }

  private static void section(StringBuilder h, String name, Optional<ObjectNode> data) {
    h.append("<section id=\"").append(esc(name)).append("\"><h2>").append(esc(name)).append("</h2>\n");
    if (data.isEmpty()) {
      h.append("<p>No events in this scenario's logs.</p></section>\n");
      return;
    }
    ObjectNode d = data.get();
    String id = d.get("id").asText();
    boolean derived = d.path("windowsPlaced").asBoolean();
    if (d.has("calls")) {
      figure(h, "calls-" + id, 320, "Calls per second of each consumer, by the second each call started; one stacked "
          + "bar per consumer, light/dark green = ok, red = failed. x = seconds since the first call ("
          + d.get("origin").asText() + "). Vertical lines: events in the provider and watcher logs (a provider "
          + "removed from or added to a set, lease_lost, revoked, stale, recovered, …) and when each consumer "
          + "became warm (the lab starts the fault only after " + Fleet.WARM_CALLS + " ok calls in a row and counts "
          + "only calls in the fault window, so failures before that are warm-up); hover for the detail. "
          + (derived ? "The solid black lines are the faults, which no process logs: each is placed at the "
              + "watcher's removal minus the window in output.txt." : "The lab's own fault marks (lab.jsonl) appear as events."));
    }
    if (d.has("windows")) {
      figure(h, "windows-" + id, 70 + 42 * d.get("windows").size(), "Stale window per round as output.txt reports "
          + "it: the lab's fault instant → the watcher's first set without the provider (watcher.jsonl), split where "
          + "the provider logged its renewals: lease remainder = last renewal before the fault + the TTL granted − "
          + "fault; detection + delivery = removal − that expiry (etcd's expiry loop, the delete, the watch)."
          + (derived ? "" : " The watcher's removals do not pair one-to-one with these windows, so the faults "
              + "are not placed on the charts."));
    }
    if (d.has("perSecond")) {
      JsonNode p = d.get("perSecond");
      figure(h, "persecond-" + id, 300, "Measured by the scenario from the logs, one value per full second, of the "
          + "calls that started in it (the figures in output.txt are computed from the same values): y = "
          + p.get("y").asText() + "; x = seconds since " + p.get("x").asText() + " (each line's own second 0). A gap"
          + " is a second in which no call started.");
    }
    figure(h, "timeline-" + id, 110 + 34 * d.get("processes").size(), "Every logged event per process (the "
        + "successful calls are left out: they are the bars above). x = "
        + (d.path("originIsFirstCall").asBoolean() ? "seconds since the first call" : "seconds since the first event")
        + "; hover a point for the event.");
    h.append("</section>\n");
  }

  private static void figure(StringBuilder h, String canvasId, int height, String caption) {
    h.append("<figure><div class=\"chart\" style=\"height:").append(height).append("px\"><canvas id=\"")
        .append(esc(canvasId)).append("\"></canvas></div><figcaption>").append(esc(caption))
        .append("</figcaption></figure>\n");
  }

  static String esc(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c);
      }
    }
    return b.toString();
  }

  /** JSON that cannot end or confuse its script element: every {@code <} becomes {@code \u003c}. */
  private static String scriptSafe(String json) {
    return json.replace("<", "\\u003c");
  }

  private static String toJson(ObjectNode data) {
    try {
      return JSON.writeValueAsString(data);
    } catch (JsonProcessingException e) {
      throw new LabException("cannot write the report's chart data: " + e.getMessage());
    }
  }

  static String chartJs() {
    try (InputStream in = LabReportPage.class.getResourceAsStream(CHART_JS)) {
      if (in == null) {
        throw new LabException("Chart.js is not on the classpath (" + CHART_JS + "): muster-lab needs the WebJar "
            + "org.webjars.npm:chart.js:4.4.1");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + CHART_JS + ": " + e.getMessage(), e);
    }
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  private static final String CSS = """
      body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1320px;color:#222;padding:0 16px}
      h1{margin:0 0 4px}h2{margin:32px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
      .summary{font-size:18px;font-weight:600}
      table{border-collapse:collapse;width:100%;font-size:13px}
      th,td{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
      th{background:#f3f3f3}td:nth-child(2),td:nth-child(3){white-space:nowrap}td.pass{color:#1b5e20;font-weight:700}td.fail{color:#b71c1c;font-weight:700}
      figure{margin:12px 0 20px}.chart{position:relative;width:100%}
      figcaption,.caption{color:#555;font-size:12.5px;margin-top:4px}
      pre{background:#f6f6f6;padding:8px;overflow-x:auto}
      """;
}
