package dev.muster.lab;

import dev.muster.lab.report.LabReportPage;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs scenarios one after another, each in its own directory under {@code out}, printing a line as each starts
 * and ends. A scenario that throws is recorded as FAIL with its logs kept, and the lab goes on. Writes, all from
 * one {@link LabRun}: {@code results.json} (the typed results), {@code output.txt} (one row per scenario: figures,
 * the seed's figures, PASS/FAIL) and {@code report.html}; and {@code env.txt} and {@code LIMITS.md}.
 */
public final class Lab {
  private final List<Scenario> scenarios;
  private final LabParams params;
  private final List<String> musterCommand;
  private final PrintStream progress;

  /**
   * @param musterCommand how to start a muster process, e.g. {@code [java, -jar, /path/muster.jar]}
   */
  public Lab(List<Scenario> scenarios, LabParams params, List<String> musterCommand, PrintStream progress) {
    this.scenarios = List.copyOf(scenarios);
    this.params = params;
    this.musterCommand = List.copyOf(musterCommand);
    this.progress = progress;
  }

  /** The scenarios named in {@code names} (all when empty); an unknown name is an error listing the known ones. */
  public List<Scenario> select(List<String> names) {
    if (names.isEmpty()) {
      return scenarios;
    }
    Set<String> wanted = new LinkedHashSet<>(names);
    List<Scenario> out = new ArrayList<>();
    for (Scenario s : scenarios) {
      if (wanted.remove(s.name())) {
        out.add(s);
      }
    }
    if (!wanted.isEmpty()) {
      throw new IllegalArgumentException("unknown scenario " + wanted + ": run 'muster lab --list' for the names");
    }
    return out;
  }

  /** Runs {@code selected}, writes the reports into {@code out}, and returns the results. */
  public List<ScenarioResult> run(List<Scenario> selected, Path out) {
    try {
      Files.createDirectories(out);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create " + out + ": " + e.getMessage(), e);
    }
    List<ScenarioResult> results = new ArrayList<>();
    long labStart = System.nanoTime();
    int n = 0;
    // An interrupt stops the lab after the scenario it hit: the reports of what ran are still written (with the
    // flag set, their file channels would refuse to), then the flag is restored for our caller.
    boolean interrupted = false;
    for (Scenario s : selected) {
      n++;
      progress.printf("[%d/%d] %s: %s%n", n, selected.size(), s.name(), s.shows());
      progress.flush();
      long start = System.nanoTime();
      ScenarioResult r;
      try (LabContext ctx = new LabContext(params, out.resolve(s.name()), musterCommand, progress)) {
        r = s.run(ctx).took(Duration.ofNanos(System.nanoTime() - start));
      } catch (InterruptedException e) {
        interrupted = true;
        r = ScenarioResult.failed(s, "interrupted", Duration.ofNanos(System.nanoTime() - start));
      } catch (Exception | AssertionError e) {
        r = ScenarioResult.failed(s, e.getClass().getSimpleName() + ": " + e.getMessage(),
            Duration.ofNanos(System.nanoTime() - start));
      }
      results.add(r);
      progress.printf("      %s in %.1f s (lab %.0f s): %s%n", r.passed() ? "PASS" : "FAIL",
          r.elapsed().toMillis() / 1000.0, (System.nanoTime() - labStart) / 1e9, r.figures().summary());
      progress.flush();
      interrupted |= Thread.interrupted(); // a scenario that restored the flag and returned
      if (interrupted) {
        progress.printf("      interrupted: the remaining %d scenario(s) are not run%n", selected.size() - n);
        progress.flush();
        break;
      }
    }
    LabRun run = new LabRun(now(), params, results);
    run.write(out);
    write(out.resolve("output.txt"), OutputTable.render(run));
    write(out.resolve("env.txt"), Environment.describe());
    write(out.resolve("LIMITS.md"), Limits.text(params));
    write(out.resolve("report.html"), LabReportPage.html(run, out));
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return results;
  }

  private static void write(Path file, String text) {
    try {
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  static String now() {
    return Instant.now().toString();
  }
}
