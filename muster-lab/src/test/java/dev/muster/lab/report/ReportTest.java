package dev.muster.lab.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report built from a tiny synthetic lab output: one stale-window scenario with two consumers, a watcher and a
 * provider, and one failed scenario without logs.
 */
class ReportTest {
  @TempDir
  Path out;

  @Test
  void inlinesChartJsDrawsOneCanvasPerChartAndListsEveryScenario() throws IOException {
    write("output.txt", """
        Muster lab, 2026-11-29T22:26:21Z
        parameters: TTL 3s, keepalive 1s, a call every 50ms, attempt timeout 300ms, ejection 2s, 1 retry
        1 of 2 scenarios passed

        kill9_stale_window  PASS   18.6s  ours: window 2500 ms; B 1 failures of 3 calls, A 0 of 3
                                   seed: window 2823 ms; B 19 failures (fast refusals), A 0
                              invariant: A failures = 0; B fails in the window <the negative control>
        broken_scenario     FAIL    0.1s  ours: did not complete: LabException: boom
                                   seed: something
        """);
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

    String html = Report.html(out);

    assertThat(html).contains(Report.chartJs()).doesNotContain("<script src");
    assertThat(Pattern.compile("<canvas ").matcher(html).results().count()).isEqualTo(3);
    assertThat(html).contains("id=\"calls-s0\"", "id=\"windows-s0\"", "id=\"timeline-s0\"")
        .contains("1 of 2 scenarios passed")
        .contains("<td><a href=\"#kill9_stale_window\">kill9_stale_window</a></td><td class=\"pass\">PASS</td>")
        .contains("<td><a href=\"#broken_scenario\">broken_scenario</a></td><td class=\"fail\">FAIL</td>")
        .contains("B fails in the window &lt;the negative control&gt;")
        .contains("No events in this scenario's logs.")
        .contains("java: 17");
    // the fault is placed at the watcher's removal (13.5 s) minus the 2500 ms window: 1.0 s after the first call
    assertThat(html).contains("\"kind\":\"" + ScenarioCharts.DERIVED_FAULT + "\",\"x\":1.0");
  }

  @Test
  void readsSingleAndMultipleWindowsFromTheFigures() {
    assertThat(ScenarioCharts.windows("window [2561, 2328, 2433] ms; B failures [17, 15, 16]"))
        .containsExactly(2561L, 2328L, 2433L);
    assertThat(ScenarioCharts.windows("window 3106 ms; B 20 failures")).containsExactly(3106L);
    assertThat(ScenarioCharts.windows("3 addresses watched")).isEmpty();
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
