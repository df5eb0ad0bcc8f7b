package dev.muster.lab;

/** {@code output.txt}: one block per scenario — result, our figures, the seed's, and the invariant checked. */
final class OutputTable {
  private OutputTable() {}

  static String render(LabRun run) {
    StringBuilder sb = new StringBuilder();
    sb.append("Muster lab, ").append(run.startedAt()).append("\n");
    sb.append("parameters: ").append(run.parametersLine()).append("\n");
    sb.append(String.format("%d of %d scenarios passed%n%n", run.passed(), run.results().size()));
    int width = run.results().stream().mapToInt(r -> r.name().length()).max().orElse(10);
    for (ScenarioResult r : run.results()) {
      sb.append(String.format("%-" + width + "s  %s  %5.1fs  ours: %s%n", r.name(), r.passed() ? "PASS" : "FAIL",
          r.elapsed().toMillis() / 1000.0, r.figures().summary()));
      sb.append(String.format("%-" + width + "s               seed: %s%n", "", r.seed()));
      if (!r.invariant().isEmpty()) {
        sb.append(String.format("%-" + width + "s          invariant: %s%n", "", r.invariant()));
      }
    }
    return sb.toString();
  }
}
