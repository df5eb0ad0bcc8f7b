package dev.muster.cache.internal;

import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;

/**
 * The mass-removal guard (SPEC §4, off by default): one change that would remove more than {@code percent} of
 * the published set is held — the last good set stays published — until later changes bring the set back within
 * the threshold, or the driver's hold timer runs out. The applier and its checkpoint keep advancing meanwhile; only
 * publishing waits. It guards against a registry that empties by mistake (a bad deploy of providers, a wrong
 * prefix), at the price of serving removed endpoints for up to the hold time, which local ejection absorbs.
 *
 * <p>Not thread-safe: owned by the {@link CacheDriver}'s thread. Normal updates cost O(changed); only while holding
 * is each candidate diffed against the published set.
 */
final class MassRemovalGuard {
  /** What to do with a candidate publication. */
  enum Verdict {
    /** Publish it (with {@link Decision#delta()}). */
    PUBLISH,
    /** Start holding: keep the published set, report it, arm the hold timer. */
    HOLD_START,
    /** Keep holding. */
    HOLD,
    /** The hold ends early: publish (with {@link Decision#delta()}) and disarm the timer. */
    RELEASE
  }

  /** The verdict, the delta from the published set, and how many instances the change would remove. */
  record Decision(Verdict verdict, EndpointDelta delta, int removed) {}

  private final int percent;
  private boolean holding;

  MassRemovalGuard(int percent) {
    this.percent = percent;
  }

  boolean isHolding() {
    return holding;
  }

  /** Judges {@code candidate} (reached from the previous candidate by {@code delta}) against {@code published}. */
  Decision judge(EndpointSet published, EndpointSet candidate, EndpointDelta delta, boolean firstPublish) {
    if (percent == 0 || firstPublish) {
      return new Decision(Verdict.PUBLISH, delta, delta.removed().size());
    }
    EndpointDelta fromPublished = holding || delta.kind() != EndpointDelta.Kind.UPDATE
        ? EndpointDelta.between(delta.kind(), published, candidate) : delta;
    int removed = fromPublished.removed().size();
    boolean tooMany = !published.isEmpty() && removed * 100L > (long) percent * published.size();
    if (tooMany) {
      Verdict v = holding ? Verdict.HOLD : Verdict.HOLD_START;
      holding = true;
      return new Decision(v, fromPublished, removed);
    }
    if (holding) {
      holding = false;
      return new Decision(Verdict.RELEASE, fromPublished, removed);
    }
    return new Decision(Verdict.PUBLISH, fromPublished, removed);
  }

  /** The hold timer ran out: stop holding (the driver publishes the truth). Returns whether it was holding. */
  boolean expire() {
    boolean was = holding;
    holding = false;
    return was;
  }
}
