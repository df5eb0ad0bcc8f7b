package dev.muster.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Compares every set a cache publishes with etcd's state at the publication's revision, as soon as it is
 * published: with many schedules compacting the shared etcd, a check left for the next quiet point would often
 * find the revision compacted. A revision compacted before its check is counted, never guessed.
 *
 * <p>Thread-safe: {@link #check} is called on the caches' notifiers and only enqueues; the comparisons run on
 * one thread per schedule; {@link #awaitChecked} is called by the schedule's thread.
 */
final class PublicationChecker implements AutoCloseable {
  private final Oracle oracle;
  private final Tally tally;
  private final ExecutorService thread;
  private final List<String> mismatches = new ArrayList<>();
  private volatile boolean closing;

  PublicationChecker(Oracle oracle, Tally tally, String name) {
    this.oracle = oracle;
    this.tally = tally;
    this.thread = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "muster-chaos-check-" + name);
      t.setDaemon(true);
      return t;
    });
  }

  /** Queues the check of {@code p}, published by cache {@code cache} watching {@code prefix}. */
  void check(String cache, String prefix, PublicationLog.Publication p) {
    if (closing) {
      return; // a cache of the schedule's tear-down publishing after the checks ended: not part of the run
    }
    try {
      enqueue(cache, prefix, p);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      if (!closing) {
        throw e;
      } // close() raced this publication: the same case as above
    }
  }

  private void enqueue(String cache, String prefix, PublicationLog.Publication p) {
    thread.execute(() -> {
      Optional<Oracle.Snapshot> truth;
      try {
        truth = oracle.rangeAt(prefix, p.revision());
      } catch (RuntimeException e) {
        if (!closing) { // closing interrupts the last checks of a schedule's own tear-down: not worth a count
          tally.add("publications not checked (etcd unavailable)");
        }
        return;
      }
      if (truth.isEmpty()) {
        tally.add("publications compacted before they could be checked");
      } else if (!truth.get().instances().equals(p.set().asMap())) {
        synchronized (mismatches) {
          mismatches.add("cache " + cache + " published (" + p.kind() + ") at revision " + p.revision()
              + " a set that is not etcd's state at that revision: "
              + QuietPoint.difference(p.set().asMap(), truth.get().instances()));
        }
      } else {
        tally.add("publications checked against etcd");
      }
    });
  }

  /** Waits until every publication queued so far is checked; returns the mismatches found. */
  List<String> awaitChecked() {
    try {
      thread.submit(() -> { }).get(5, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("the publication checks did not finish: " + e, e);
    }
    synchronized (mismatches) {
      return List.copyOf(mismatches);
    }
  }

  @Override
  public void close() {
    closing = true;
    thread.shutdownNow();
  }
}
