package dev.muster.cli;

import java.util.Comparator;
import java.util.Objects;

/**
 * One thing {@code muster doctor} found: how bad it is, what it is (naming the member, key or lease), and what to
 * do about it. Printed as {@code SEVERITY  WHAT — TODO}.
 */
record DoctorFinding(Severity severity, String what, String todo) {
  /** Worst first; the exit code is the worst one's. */
  enum Severity {
    ERROR(2), WARNING(1);

    final int exitCode;

    Severity(int exitCode) {
      this.exitCode = exitCode;
    }
  }

  static final Comparator<DoctorFinding> WORST_FIRST = Comparator.comparing(DoctorFinding::severity);

  DoctorFinding {
    Objects.requireNonNull(severity, "severity");
    Objects.requireNonNull(what, "what");
    Objects.requireNonNull(todo, "todo");
  }

  static DoctorFinding error(String what, String todo) {
    return new DoctorFinding(Severity.ERROR, what, todo);
  }

  static DoctorFinding warning(String what, String todo) {
    return new DoctorFinding(Severity.WARNING, what, todo);
  }

  @Override
  public String toString() {
    return String.format("%-7s  %s — %s", severity, what, todo);
  }
}
