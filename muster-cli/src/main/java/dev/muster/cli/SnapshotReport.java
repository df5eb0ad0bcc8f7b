package dev.muster.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What {@code muster snapshot verify} found: findings (errors and warnings, one line each) and, when it compared
 * with a live cluster, one row per {@code namespace/service} seen on either side. The exit code follows from the
 * findings: 2 with any error, 1 with warnings only, 0 otherwise.
 *
 * <p>Why a table per service and not only the key count: the seed-001 restore lost two services' registrations and
 * only a key-count check caught it, by luck; a count per service names what a stale or damaged snapshot would
 * lose, so an operator can tell "two services registered after the snapshot" from "the snapshot is not ours".
 *
 * <p>Not thread-safe; built and printed by one command.
 */
final class SnapshotReport {
  enum Severity { ERROR, WARNING }

  /** One finding, printed as {@code SEVERITY  message}. */
  record Finding(Severity severity, String message) {
    @Override
    public String toString() {
      return severity + "  " + message;
    }
  }

  /** A service's instances in the snapshot and live (0 when absent on that side). */
  record Row(String service, int snapshot, int live) {
    String verdict() {
      if (snapshot == live) {
        return "equal";
      }
      return snapshot == 0 ? "missing in snapshot" : live == 0 ? "missing live" : "differs";
    }

    boolean equal() {
      return snapshot == live;
    }
  }

  private final List<Finding> findings = new ArrayList<>();
  private final List<Row> rows = new ArrayList<>();

  void error(String message) {
    findings.add(new Finding(Severity.ERROR, message));
  }

  void warning(String message) {
    findings.add(new Finding(Severity.WARNING, message));
  }

  /**
   * Compares the counts restored from the snapshot with the live ones: a row per service on either side, and an
   * error naming each service whose count differs or that one side lacks; a warning when the undecodable keys
   * differ in number (they belong to no service, so they cannot be named by one).
   */
  void compare(ServiceCounts snapshot, ServiceCounts live) {
    SortedSet<String> services = new TreeSet<>(snapshot.instances().keySet());
    services.addAll(live.instances().keySet());
    for (String service : services) {
      Row row = new Row(service, snapshot.instances().getOrDefault(service, 0),
          live.instances().getOrDefault(service, 0));
      rows.add(row);
      if (!row.equal()) {
        error(service + ": " + row.snapshot() + " instances in the snapshot, " + row.live() + " live — "
            + explanation(row));
      }
    }
    if (snapshot.undecodable().size() != live.undecodable().size()) {
      warning(snapshot.undecodable().size() + " undecodable keys in the snapshot, " + live.undecodable().size()
          + " live (muster ls lists them)");
    }
  }

  private static String explanation(Row row) {
    if (row.snapshot() == 0) {
      return "the snapshot predates them or lost them";
    }
    if (row.live() == 0) {
      return "they left since the snapshot, or the live cluster lost them";
    }
    return "instances came or went since the snapshot, or one side lost some";
  }

  List<Finding> findings() {
    return List.copyOf(findings);
  }

  List<Row> rows() {
    return List.copyOf(rows);
  }

  /** 2 with any error, 1 with warnings only, 0 with no finding. */
  int exitCode() {
    if (findings.stream().anyMatch(f -> f.severity() == Severity.ERROR)) {
      return 2;
    }
    return findings.isEmpty() ? 0 : 1;
  }

  /** The table {@code SERVICE  SNAPSHOT  LIVE  VERDICT}, columns aligned; empty without a comparison. */
  List<String> table() {
    if (rows.isEmpty()) {
      return List.of();
    }
    int width = Math.max("SERVICE".length(), rows.stream().mapToInt(r -> r.service().length()).max().orElse(0));
    String format = "%-" + width + "s  %8s  %8s  %s";
    List<String> lines = new ArrayList<>();
    lines.add(String.format(format, "SERVICE", "SNAPSHOT", "LIVE", "VERDICT"));
    rows.forEach(r -> lines.add(String.format(format, r.service(), r.snapshot(), r.live(), r.verdict())));
    return lines;
  }
}
