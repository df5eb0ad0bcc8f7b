package dev.muster.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.lab.Figures;
import dev.muster.lab.LabParams;
import dev.muster.lab.LabRun;
import dev.muster.lab.PerSecondChart;
import dev.muster.lab.ScenarioResult;
import dev.muster.lab.StaleWindow;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report page built from a tiny synthetic lab run: one stale-window scenario with two consumers, a watcher and
 * a provider, and one failed scenario without logs.
 */
class LabReportPageTest {
  @TempDir
  Path out;

  @Test
  void inlinesChartJsDrawsOneCanvasPerChartAndListsEveryScenario() throws IOException {
    LabRun run = new LabRun("2026-11-29T22:26:21Z", LabParams.seed(), List.of(
        new ScenarioResult("kill9_stale_window", true, Figures.withWindows(
            "window 2500 ms; B 1 failures of 3 calls, A 0 of 3", List.of(StaleWindow.split(2500, 2000))),
            "A failures = 0; B fails in the window <the negative control>", "window 2823 ms; B 19 failures (fast"
            + " refusals), A 0", Duration.ofMillis(18_600)),
        new ScenarioResult("broken_scenario", false, Figures.of("did not complete: LabException: boom"), "",
            "something", Duration.ofMillis(100))));
    write("env.txt", "java: 17\n");
    write("kill9_stale_window/consumer-a.jsonl", call("10.000", true, "p1") + call("11.200", true, "p2")
        + call("12.900", true, "p1"));
    write("kill9_stale_window/consumer-b.jsonl", call("10.050", true, "p1") + call("11.250", false, "p2")
        + call("12.950", true, "p1"));
    write("kill9_stale_window/watcher.jsonl", """
        {"event":"snapshot","ts":"2026-11-29T22:25:09.000000Z","instances":[{"id":"p1"},{"id":"p2"}]}
        {"event":"update","ts":"2026-11-29T22:25:13.500000Z","instances":[{"id":"p1"}]}
        """);
    write("kill9_stale_window/p1.jsonl", """
        {"event":"registered","ts":"2026-11-29T22:25:08.000000Z","id":"p1","detail":""}
        """);
    Files.createDirectories(out.resolve("broken_scenario"));

    String html = LabReportPage.html(run, out);

    assertThat(html).contains(LabReportPage.chartJs()).doesNotContain("<script src");
    assertThat(Pattern.compile("<canvas ").matcher(html).results().count()).isEqualTo(3);
    assertThat(html).contains("id=\"calls-s0\"", "id=\"windows-s0\"", "id=\"timeline-s0\"")
        .contains("1 of 2 scenarios passed", "<td>18.6 s</td>")
        .contains("<td><a href=\"#kill9_stale_window\">kill9_stale_window</a></td><td class=\"pass\">PASS</td>")
        .contains("<td><a href=\"#broken_scenario\">broken_scenario</a></td><td class=\"fail\">FAIL</td>")
        .contains("B fails in the window &lt;the negative control&gt;")
        .contains("No events in this scenario's logs.")
        .contains("java: 17");
    // the fault is placed at the watcher's removal (13.5 s) minus the 2500 ms window: 1.0 s after the first call
    assertThat(html).contains("\"kind\":\"" + ScenarioCharts.DERIVED_FAULT + "\",\"x\":1.0");
    // the window's split comes from the typed figures, not from their text
    assertThat(html).contains("\"ms\":2500,\"remainder\":2000,\"detection\":500");
  }

  @Test
  void rendersAgainFromResultsJsonAsFromTheRun() throws IOException {
    LabRun run = new LabRun("2026-11-29T22:26:21Z", LabParams.seed(), List.of(new ScenarioResult("sigstop", true,
        Figures.withWindows("window [2561, 2328] ms", List.of(StaleWindow.split(2561, 2400),
            StaleWindow.unsplit(2328))), "A failures = 0", "seed", Duration.ofMillis(26_700))));
    write("env.txt", "java: 17\n");

    run.write(out);

    assertThat(LabRun.read(out)).isEqualTo(run);
    assertThat(LabReportPage.html(LabRun.read(out), out)).isEqualTo(LabReportPage.html(run, out));
  }

  @Test
  void drawsAPerSecondChartFromTheTypedFiguresAndKeepsItInResultsJson() throws IOException {
    PerSecondChart chart = new PerSecondChart("p1's share of the calls started in that second, %",
        "the consumer's probe_up of p1", List.of(
            new PerSecondChart.Line("S (slow start 10 s)", java.util.Arrays.asList(4.5, null, 9.1)),
            new PerSecondChart.Line("N (no slow start)", List.of(33.3, 32.0, 34.1))));
    LabRun run = new LabRun("2026-12-01T22:26:21Z", LabParams.seed(), List.of(new ScenarioResult(
        "slow_start_after_recovery", true, Figures.withPerSecond("S 4.5 % in the first second", chart),
        "S ramps", "Envoy's slow start", Duration.ofMillis(30_000))));
    write("env.txt", "java: 17\n");
    write("slow_start_after_recovery/consumer-s.jsonl", call("10.000", true, "p1")
        + "{\"event\":\"probe_up\",\"ts\":\"2026-11-29T22:25:10.500000Z\",\"service\":\"hello\","
        + "\"instance\":\"p1\",\"detail\":\"http:/health: 2 passed in a row, last 200\"}\n");

    run.write(out);
    String html = LabReportPage.html(run, out);

    assertThat(LabRun.read(out)).isEqualTo(run);
    assertThat(html).contains("id=\"persecond-s0\"")
        .contains("\"perSecond\":{\"y\":\"p1's share of the calls started in that second, %\"")
        .contains("\"values\":[4.5,null,9.1]")
        .contains("seconds since the consumer&#39;s probe_up of p1");
    // a consumer's health event names its instance
    assertThat(html).contains("probe_up p1: http:/health: 2 passed in a row, last 200");
  }

  private static String call(String seconds, boolean ok, String id) {
    return "{\"event\":\"call\",\"ts\":\"2026-11-29T22:25:" + seconds + "000Z\",\"ok\":" + ok
        + ",\"attempts\":[\"" + id + "\"]}\n";
  }

  private void write(String name, String text) throws IOException {
    Path file = out.resolve(name);
    Files.createDirectories(file.getParent());
    Files.writeString(file, text);
  }
}
