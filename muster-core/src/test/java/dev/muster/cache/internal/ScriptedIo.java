package dev.muster.cache.internal;

import dev.muster.cache.internal.CacheDriver.CacheIoException;
import dev.muster.cache.internal.CacheDriver.Range;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * A {@link CacheDriver.Io} that plays a script: each {@link #range} takes the next scripted result (a range, handed
 * over a record per page, or a failure), each {@link #probe()} the next scripted answer (false when none is left). Every call is written to the
 * shared journal, e.g. {@code "range"}, {@code "watch 2 from 11"}, {@code "cancel 1"}.
 */
final class ScriptedIo implements CacheDriver.Io {
  static final long CLUSTER = 0xC1C1;

  private final List<String> journal;
  private final Deque<Function<CacheDriver.Pages, Range>> ranges = new ArrayDeque<>();
  private final Deque<Boolean> probes = new ArrayDeque<>();
  private final Deque<Optional<List<RevisionApplier.KeyRevision>>> keys = new ArrayDeque<>();
  private long lastStream;
  private long lastFrom = -1;
  private int watches;
  private int resets;
  private int rangeCalls;

  ScriptedIo(List<String> journal) {
    this.journal = journal;
  }

  /** The next range reads {@code records} at {@code revision} in cluster {@link #CLUSTER}. */
  ScriptedIo willRange(long revision, CacheRecord... records) {
    return willRange(CLUSTER, revision, records);
  }

  ScriptedIo willRange(long clusterId, long revision, CacheRecord... records) {
    ranges.add(pages -> {
      pages.page(revision, List.of()); // as etcd's first page of an empty prefix: nothing, but a revision
      for (CacheRecord r : records) {
        pages.page(revision, List.of(r));
      }
      return new Range(revision, clusterId, records.length);
    });
    return this;
  }

  /** The next range fails because etcd cannot be reached (the connection is in doubt). */
  ScriptedIo willFailRange(String why) {
    ranges.add(pages -> {
      throw new CacheIoException(why, null, true);
    });
    return this;
  }

  /** The next range is refused by etcd (e.g. permission denied): the connection is fine. */
  ScriptedIo willRefuseRange(String why) {
    ranges.add(pages -> {
      throw new CacheIoException(why, null, false);
    });
    return this;
  }

  /** The next range is refused for good (permission denied, authentication failed): the cache must stop. */
  ScriptedIo willDenyRange(dev.muster.MusterException why) {
    ranges.add(pages -> {
      throw new CacheIoException(why);
    });
    return this;
  }

  /**
   * The next audit's keys-only range answers these (key, mod revision) pairs, given as id then revision:
   * {@code willKeys("a", 5, "b", 7)}. Unscripted audits fail as if etcd could not be read, and are not journaled.
   */
  ScriptedIo willKeys(Object... idsAndRevisions) {
    List<RevisionApplier.KeyRevision> answer = new ArrayList<>();
    for (int i = 0; i < idsAndRevisions.length; i += 2) {
      answer.add(new RevisionApplier.KeyRevision(dev.muster.cache.Endpoints.key((String) idsAndRevisions[i]),
          ((Number) idsAndRevisions[i + 1]).longValue()));
    }
    keys.add(Optional.of(answer));
    return this;
  }

  /** The next audit's range finds its revision compacted. */
  ScriptedIo willKeysCompacted() {
    keys.add(Optional.empty());
    return this;
  }

  @Override
  public Optional<List<RevisionApplier.KeyRevision>> keys(long revision) {
    Optional<List<RevisionApplier.KeyRevision>> next = keys.poll();
    if (next == null) {
      throw new CacheIoException("no audit scripted", null, false);
    }
    journal.add("keys at " + revision);
    return next;
  }

  ScriptedIo willProbe(boolean... answers) {
    for (boolean a : answers) {
      probes.add(a);
    }
    return this;
  }

  @Override
  public Range range(CacheDriver.Pages pages) {
    journal.add("range");
    rangeCalls++;
    Function<CacheDriver.Pages, Range> next = ranges.poll();
    if (next == null) {
      throw new AssertionError("range() called but none is scripted");
    }
    return next.apply(pages);
  }

  @Override
  public void watch(long stream, long fromRevision) {
    journal.add("watch " + stream + " from " + fromRevision);
    lastStream = stream;
    lastFrom = fromRevision;
    watches++;
  }

  @Override
  public void cancel(long stream) {
    journal.add("cancel " + stream);
  }

  @Override
  public void requestProgress(long stream) {
    journal.add("requestProgress " + stream);
  }

  @Override
  public void connectionFailed(String reason) {
    journal.add("connectionFailed");
    resets++;
  }

  @Override
  public boolean probe() {
    Boolean answer = probes.poll();
    boolean ok = answer != null && answer;
    journal.add("probe " + ok);
    return ok;
  }

  /** The stream number of the last watch opened. */
  long lastStream() {
    return lastStream;
  }

  /** Where the last watch started (0: now), -1 before the first. */
  long lastFrom() {
    return lastFrom;
  }

  int watches() {
    return watches;
  }

  /** How many failures were reported against the connection. */
  int resets() {
    return resets;
  }

  int rangeCalls() {
    return rangeCalls;
  }

  List<String> calls() {
    return new ArrayList<>(journal);
  }
}
