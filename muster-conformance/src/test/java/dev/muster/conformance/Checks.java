package dev.muster.conformance;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.conformance.Adapter.Observation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The suite's assertions, one cell at a time: for an adapter whose cell in the conformance table is {@code ✓}, a
 * property that must come true within a time ({@link #eventually}) or hold for a while ({@link #always}); a cell
 * marked not applied is recorded as such and not asserted. Failures are collected, so one run fills the whole
 * table, and reported together by {@link #assertAllHeld()}.
 */
final class Checks {
  private static final Duration POLL = Duration.ofMillis(200);
  private final List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());

  /** {@code holds} comes true within {@code within}, and {@code throughout} holds for every observation until then. */
  Observation eventually(String row, Adapter a, Duration within, Predicate<Observation> holds,
      Predicate<Observation> throughout) {
    if (!ConformanceTable.expected(row, a.column())) {
      ConformanceTable.record(row, a.column(), "n/a", "not applied (the table says why)");
      return null;
    }
    long deadline = System.nanoTime() + within.toNanos();
    Observation last;
    while (true) {
      last = a.observe();
      if (!throughout.test(last)) {
        fail(row, a, "broke on the way: " + last);
        return last;
      }
      if (holds.test(last)) {
        ConformanceTable.record(row, a.column(), "pass", last.ids() + " " + last.detail());
        return last;
      }
      if (System.nanoTime() - deadline > 0) {
        fail(row, a, "not within " + within.toMillis() + " ms; last " + last);
        return last;
      }
      sleep(POLL);
    }
  }

  Observation eventually(String row, Adapter a, Duration within, Predicate<Observation> holds) {
    return eventually(row, a, within, holds, o -> true);
  }

  /** {@code holds} is true of every observation for {@code during}. */
  void always(String row, Adapter a, Duration during, Predicate<Observation> holds) {
    if (!ConformanceTable.expected(row, a.column())) {
      ConformanceTable.record(row, a.column(), "n/a", "not applied (the table says why)");
      return;
    }
    long end = System.nanoTime() + during.toNanos();
    int n = 0;
    do {
      Observation o = a.observe();
      n++;
      if (!holds.test(o)) {
        fail(row, a, "observation " + n + ": " + o);
        return;
      }
      sleep(POLL);
    } while (System.nanoTime() - end < 0);
    ConformanceTable.record(row, a.column(), "pass", n + " observations over " + during.toMillis() + " ms");
  }

  /**
   * Slow start: once {@code id} is back in {@code a}'s picks, its share of the next {@code observations} ones stays
   * below {@code maxShare} (its fair share is larger: without slow start it would get it at once).
   */
  void rampsUp(String row, Adapter a, String id, Duration within, int observations, double maxShare) {
    if (!ConformanceTable.expected(row, a.column())) {
      ConformanceTable.record(row, a.column(), "n/a", "not applied (the table says why)");
      return;
    }
    long deadline = System.nanoTime() + within.toNanos();
    Observation first = a.observe();
    while (!first.ids().contains(id)) {
      if (System.nanoTime() - deadline > 0) {
        fail(row, a, id + " not back within " + within.toMillis() + " ms; last " + first);
        return;
      }
      sleep(POLL);
      first = a.observe();
    }
    int mine = 0;
    int all = 0;
    for (int i = 0; i < observations; i++) {
      Observation o = a.observe();
      mine += o.counts().getOrDefault(id, 0);
      all += o.counts().values().stream().mapToInt(Integer::intValue).sum();
    }
    double share = all == 0 ? 1.0 : (double) mine / all;
    String what = String.format("%s got %d of %d (%.0f %%) right after it came back", id, mine, all, share * 100);
    if (share < maxShare) {
      ConformanceTable.record(row, a.column(), "pass", what);
    } else {
      fail(row, a, what + ", not below " + Math.round(maxShare * 100) + " %");
    }
  }

  /** Records a cell the adapter does not apply (the table marks it not applied), after checking the table says so. */
  void notApplied(String row, Adapter a) {
    if (ConformanceTable.expected(row, a.column())) {
      fail(row, a, "the conformance table marks it ✓ but this scenario does not test it for this adapter");
    } else {
      ConformanceTable.record(row, a.column(), "n/a", "not applied (the table says why)");
    }
  }

  /** A set-up step every adapter must reach before a scenario begins (not a table cell). */
  void ready(String what, Adapter a, Duration within, Predicate<Observation> holds) {
    long deadline = System.nanoTime() + within.toNanos();
    Observation last;
    do {
      last = a.observe();
      if (holds.test(last)) {
        return;
      }
      sleep(POLL);
    } while (System.nanoTime() - deadline < 0);
    throw new AssertionError(a.column() + ": " + what + " not within " + within.toMillis() + " ms; last " + last);
  }

  void assertAllHeld() {
    assertThat(failures).as("cells the conformance table marks ✓ that did not hold").isEmpty();
  }

  private void fail(String row, Adapter a, String why) {
    ConformanceTable.record(row, a.column(), "FAIL", why);
    failures.add("(" + row + ", " + a.column() + "): " + why);
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
