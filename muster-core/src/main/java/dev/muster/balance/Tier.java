package dev.muster.balance;

import dev.muster.balance.BalancerConfig.Policy;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * One immutable array of candidates and the three ways of choosing among them, optionally skipping one endpoint (the
 * one a retry must avoid). Allocation-free: index arithmetic, one atomic increment or one or two random draws.
 *
 * <p>Immutable; safe to share. The round-robin counter and the random generator are the caller's.
 */
final class Tier {
  static final Tier EMPTY = new Tier(new EndpointState[0]);

  private final EndpointState[] candidates;
  /** cumulative[i] = weight of candidates 0..i; weight-0 endpoints own an empty range and are never drawn. */
  private final long[] cumulative;

  Tier(EndpointState[] candidates) {
    this.candidates = candidates;
    this.cumulative = new long[candidates.length];
    long sum = 0;
    for (int i = 0; i < candidates.length; i++) {
      sum += candidates[i].instance().weight();
      cumulative[i] = sum;
    }
  }

  int size() {
    return candidates.length;
  }

  /** A candidate other than {@code avoid} (which may be null or absent), or null when there is none. */
  EndpointState pick(Policy policy, AtomicLong roundRobin, RandomGenerator random, EndpointState avoid) {
    int n = candidates.length;
    int skip = indexOf(avoid);
    int choices = skip < 0 ? n : n - 1;
    if (choices == 0) {
      return null;
    }
    if (choices == 1) {
      return candidates[skip == 0 ? 1 : 0];
    }
    switch (policy) {
      case ROUND_ROBIN -> {
        int i = (int) Math.floorMod(roundRobin.getAndIncrement(), (long) n);
        return candidates[i == skip ? (i + 1) % n : i];
      }
      case WEIGHTED_RANDOM -> {
        return weighted(random, skip, choices);
      }
      case POWER_OF_TWO -> {
        int a = random.nextInt(choices);
        int b = random.nextInt(choices - 1);
        if (b >= a) {
          b++;
        }
        return lessLoaded(candidates[unskip(a, skip)], candidates[unskip(b, skip)]);
      }
      default -> throw new AssertionError(policy);
    }
  }

  private EndpointState weighted(RandomGenerator random, int skip, int choices) {
    int n = candidates.length;
    long skipStart = skip <= 0 ? 0 : cumulative[skip - 1];
    long skipWeight = skip < 0 ? 0 : cumulative[skip] - skipStart;
    long total = cumulative[n - 1] - skipWeight;
    if (total <= 0) {
      return candidates[unskip(random.nextInt(choices), skip)]; // every other candidate has weight 0: uniform
    }
    long x = random.nextLong(total);
    if (skip >= 0 && x >= skipStart) {
      x += skipWeight;
    }
    int lo = 0;
    int hi = n - 1;
    while (lo < hi) { // first i with cumulative[i] > x
      int mid = (lo + hi) >>> 1;
      if (cumulative[mid] > x) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    return candidates[lo];
  }

  /**
   * The lower {@link EndpointState#score()}; when either has no latency sample yet, the fewer attempts in flight (an
   * unmeasured endpoint would otherwise look infinitely fast and draw every pick until its first answer).
   */
  private static EndpointState lessLoaded(EndpointState a, EndpointState b) {
    if (a.hasLatencySample() && b.hasLatencySample()) {
      long now = a.nowNanos(); // one clock read per pick: both states run on the balancer's ticker
      return b.score(now) < a.score(now) ? b : a;
    }
    return b.inFlight() < a.inFlight() ? b : a;
  }

  private static int unskip(int i, int skip) {
    return skip >= 0 && i >= skip ? i + 1 : i;
  }

  private int indexOf(EndpointState e) {
    if (e != null) {
      for (int i = 0; i < candidates.length; i++) {
        if (candidates[i] == e) {
          return i;
        }
      }
    }
    return -1;
  }
}
