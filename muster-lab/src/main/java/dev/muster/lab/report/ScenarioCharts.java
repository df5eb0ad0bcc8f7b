package dev.muster.lab.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.muster.lab.Figures;
import dev.muster.lab.Fleet;
import dev.muster.lab.PerSecondChart;
import dev.muster.lab.StaleWindow;
import dev.muster.testing.JsonLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The chart data of one scenario, as JSON for the page's script, computed from the scenario's {@code *.jsonl} logs,
 * the stale windows it measured ({@link Figures#staleWindows()}) and its per-second figures
 * ({@link Figures#perSecond()}, passed through as the scenario computed them).
 *
 * <p>Time is seconds since the scenario's first call (or its first logged event when no process made calls). The
 * lab logs its own faults in {@code lab.jsonl}, drawn like any process's events. In addition, when the scenario
 * measured stale windows and the watcher removed exactly that many providers, each fault is
 * placed at the removal minus its window and marked as derived (this also serves runs without {@code lab.jsonl}).
 */
final class ScenarioCharts {
  static final String DERIVED_FAULT = "fault (removal − window)";
  /** The lab's warm-up rule ({@link Fleet#WARM_CALLS}), as far as the chart can tell: that many ok in a row. */
  static final String WARM = "warm (" + Fleet.WARM_CALLS + " ok in a row)";

  private ScenarioCharts() {}

  /** A logged moment: which process, what kind (the legend), when, and the tooltip text. */
  private record Event(String process, String kind, Instant at, String label) {}

  /** The data for {@code dir}, or empty when it holds no event. */
  static Optional<ObjectNode> build(ObjectMapper json, String scenario, Path dir, Figures figures) {
    List<StaleWindow> windows = figures.staleWindows();
    List<String> processes = new ArrayList<>();
    List<Event> events = new ArrayList<>();
    List<Event> calls = new ArrayList<>();
    for (Path file : logs(dir)) {
      String process = file.getFileName().toString().replaceFirst("\\.jsonl$", "");
      processes.add(process);
      read(process, JsonLog.read(file), events, calls);
    }
    Optional<Instant> first = Stream.concat(calls.stream(), events.stream()).map(Event::at).min(Instant::compareTo);
    if (first.isEmpty()) {
      return Optional.empty();
    }
    Instant origin = calls.stream().map(Event::at).min(Instant::compareTo).orElse(first.get());

    ObjectNode out = json.createObjectNode().put("name", scenario).put("origin", origin.toString())
        .put("originIsFirstCall", !calls.isEmpty());
    List<Event> removals = events.stream().filter(e -> e.process().equals("watcher") && e.kind().equals("removed"))
        .toList();
    boolean placed = !windows.isEmpty() && windows.size() == removals.size();
    if (!windows.isEmpty()) {
      ArrayNode w = out.putArray("windows");
      for (int i = 0; i < windows.size(); i++) {
        String who = placed ? removals.get(i).label().replaceFirst("^.*removed ", "") : "";
        ObjectNode row = w.addObject()
            .put("label", ((windows.size() > 1 ? "round " + (i + 1) + " " : "") + who).trim())
            .put("ms", windows.get(i).windowMs());
        if (windows.stream().allMatch(StaleWindow::isSplit)) {
          row.put("remainder", windows.get(i).leaseRemainderMs()).put("detection", windows.get(i).detectionMs());
        }
        if (placed) {
          long ms = windows.get(i).windowMs();
          events.add(new Event("lab (derived)", DERIVED_FAULT, removals.get(i).at().minusMillis(ms),
              "fault ≈ watcher removed " + who + " at " + removals.get(i).at() + " − window " + ms
                  + " ms (output.txt)"));
        }
      }
      out.put("windowsPlaced", placed);
      if (placed) {
        processes.add("lab (derived)");
      }
    }
    if (!calls.isEmpty()) {
      out.set("calls", perSecond(json, calls, origin));
    }
    PerSecondChart chart = figures.perSecond();
    if (chart != null) {
      ObjectNode c = out.putObject("perSecond").put("y", chart.y()).put("x", chart.x());
      ArrayNode lines = c.putArray("lines");
      for (PerSecondChart.Line line : chart.lines()) {
        lines.addObject().put("label", line.label()).set("values", json.valueToTree(line.values()));
      }
    }
    ArrayNode markers = out.putArray("markers");
    ArrayNode timeline = out.putArray("events");
    for (Event e : events) {
      double x = seconds(origin, e.at());
      timeline.addObject().put("process", e.process()).put("kind", e.kind()).put("x", x).put("label", e.label());
      if (isMarker(e.kind())) {
        markers.addObject().put("kind", e.kind()).put("x", x).put("label", e.process() + ": " + e.label());
      }
    }
    out.set("processes", json.valueToTree(processes));
    return Optional.of(out);
  }

  /** Fault moments for the calls chart: everything but routine registration, renewals, snapshots and failed calls. */
  private static boolean isMarker(String kind) {
    return !Set.of("registered", "snapshot", "update", "call failed", "keepalive").contains(kind);
  }

  private static List<Path> logs(Path dir) {
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".jsonl")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Calls go to {@code calls}; everything else, with set changes spelled out, to {@code events}. */
  private static void read(String process, JsonLog log, List<Event> events, List<Event> calls) {
    Set<String> previous = null;
    int okInARow = 0;
    boolean warm = false;
    for (JsonNode line : log.lines()) {
      Optional<Instant> at = ts(line);
      String event = line.path("event").asText("");
      if (at.isEmpty() || event.isEmpty()) {
        continue;
      }
      if (event.equals("call")) {
        boolean ok = line.path("ok").asBoolean();
        calls.add(new Event(process, ok ? "ok" : "failed", at.get(), ""));
        okInARow = ok ? okInARow + 1 : 0;
        if (!warm && okInARow == Fleet.WARM_CALLS) {
          warm = true;
          events.add(new Event(process, WARM, at.get(), "the " + Fleet.WARM_CALLS + "th ok call in a row (in log order) started"));
        }
        if (!ok) {
          events.add(new Event(process, "call failed", at.get(), "call failed, attempts " + line.path("attempts")
              + ", status " + line.path("status").asText("-")));
        }
      } else if (line.has("instances")) {
        Set<String> ids = new LinkedHashSet<>(JsonLog.ids(line));
        events.add(new Event(process, event, at.get(), event + " " + ids));
        if (previous != null) {
          for (String id : previous) {
            if (!ids.contains(id)) {
              events.add(new Event(process, "removed", at.get(), "removed " + id));
            }
          }
          for (String id : ids) {
            if (!previous.contains(id)) {
              events.add(new Event(process, "added", at.get(), "added " + id));
            }
          }
        }
        previous = ids;
      } else {
        String detail = line.path("detail").asText("");
        // a provider's events name it in "id", a consumer's health events (probe_down, ...) in "instance"
        String about = line.path("id").asText(line.path("instance").asText(""));
        events.add(new Event(process, event, at.get(), event + " " + about
            + (detail.isEmpty() ? "" : ": " + detail)));
      }
    }
  }

  /** Per consumer and second since {@code origin}: how many calls started then and succeeded or failed. */
  private static ObjectNode perSecond(ObjectMapper json, List<Event> calls, Instant origin) {
    int n = 1 + calls.stream().mapToInt(c -> (int) seconds(origin, c.at())).max().orElse(0);
    ObjectNode out = json.createObjectNode().put("seconds", n);
    ArrayNode consumers = out.putArray("consumers");
    for (String name : calls.stream().map(Event::process).distinct().sorted().toList()) {
      int[] ok = new int[n];
      int[] failed = new int[n];
      for (Event c : calls) {
        if (c.process().equals(name)) {
          (c.kind().equals("ok") ? ok : failed)[(int) seconds(origin, c.at())]++;
        }
      }
      ObjectNode consumer = consumers.addObject().put("name", name);
      consumer.set("ok", json.valueToTree(ok));
      consumer.set("failed", json.valueToTree(failed));
    }
    return out;
  }

  private static Optional<Instant> ts(JsonNode line) {
    try {
      return Optional.of(JsonLog.ts(line));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static double seconds(Instant origin, Instant t) {
    return Math.round(Duration.between(origin, t).toNanos() / 1e6) / 1000.0;
  }
}
