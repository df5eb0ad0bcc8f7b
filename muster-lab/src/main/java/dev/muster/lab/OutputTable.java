package dev.muster.lab;

import java.util.List;

/** {@code output.txt}: one block per scenario — result, our figures, the seed's, and the invariant checked. */
final class OutputTable {
  private OutputTable() {}

  static String render(List<ScenarioResult> results, LabParams p) {
    StringBuilder sb = new StringBuilder();
    long passed = results.stream().filter(ScenarioResult::passed).count();
    sb.append("Muster lab, ").append(Lab.now()).append("\n");
    sb.append(String.format("parameters: TTL %s, keepalive %s, a call every %s, attempt timeout %s, ejection %s, "
            + "%d retry%n", LabParams.format(p.ttl()), LabParams.format(p.keepalive()),
        LabParams.format(p.callInterval()), LabParams.format(p.attemptTimeout()), LabParams.format(p.ejectionTime()),
        p.maxRetries()));
    sb.append(String.format("%d of %d scenarios passed%n%n", passed, results.size()));
    int width = results.stream().mapToInt(r -> r.name().length()).max().orElse(10);
    for (ScenarioResult r : results) {
      sb.append(String.format("%-" + width + "s  %s  %5.1fs  ours: %s%n", r.name(), r.passed() ? "PASS" : "FAIL",
          r.elapsed().toMillis() / 1000.0, r.figures()));
      sb.append(String.format("%-" + width + "s               seed: %s%n", "", r.seed()));
      if (!r.invariant().isEmpty()) {
        sb.append(String.format("%-" + width + "s          invariant: %s%n", "", r.invariant()));
      }
    }
    return sb.toString();
  }
}
