package dev.muster.balance;

import dev.muster.balance.BalancerConfig.Policy;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * One immutable array of candidates and the three ways of choosing among them, optionally skipping one endpoint (the
 * one a retry must avoid). Allocation-free: index arithmetic, one atomic increment or one or two random draws.
 * Weighted random is O(1) through an alias table; a weighted pick that skips one candidate binary-searches the
 * cumulative weights instead (retries are rare; an alias table per skipped candidate is not worth its memory).
 *
 * <p>Slow start: a candidate may carry a share {@code admit[i]} below 1. Weighted random draws it by
 * {@code weight × share}; power of two lets it into the duel with probability {@code share} (if neither drawn
 * candidate gets in, the duel is fought as usual); round robin takes it with probability {@code share}, else the
 * next one. Either way a ramping endpoint gets about {@code share} of its fair share of new picks, whatever the load.
 *
 * <p>Immutable; safe to share. The round-robin counter and the random generator are the caller's.
 */
final class Tier {
  static final Tier EMPTY = new Tier(new EndpointState[0], null);
  /** Weights are scaled by this when some candidate ramps, so a 10 % share of weight 1 is still drawable. */
  private static final long SCALE = 1000;
  /** Power of two: a latency difference within this many standard errors of the two estimates is no difference. */
  static final double NOISE = 2.0;
  /** Power of two: loads within this relative difference are a tie. */
  static final double TIE = 1e-9;

  private final EndpointState[] candidates;
  /** Each candidate's slow-start share, or null when none ramps. */
  private final double[] admit;
  /**
   * cumulative[i] = weight of candidates 0..i; weight-0 endpoints own an empty range and are never drawn. For a pick
   * that must skip one candidate (a retry).
   */
  private final long[] cumulative;
  /**
   * Walker's alias table (Vose's construction, in exact integers) for a weighted pick with nothing to skip, O(1):
   * draw column {@code c} uniformly and {@code r} in [0, total); the pick is {@code c} if {@code r < keep[c]}, else
   * {@code alias[c]}. Candidate i then has probability {@code weight(i) / total} exactly, as with the binary search
   * over {@code cumulative} (see {@link #aliasProbabilityNumerators()}). Built once per tier, at build time.
   */
  private final long[] keep;
  private final int[] alias;

  Tier(EndpointState[] candidates, double[] admit) {
    this.candidates = candidates;
    this.admit = admit;
    int n = candidates.length;
    this.cumulative = new long[n];
    long[] weights = new long[n];
    long sum = 0;
    for (int i = 0; i < n; i++) {
      int w = candidates[i].instance().weight();
      weights[i] = admit == null ? w : w == 0 ? 0 : Math.max(1, Math.round(w * SCALE * admit[i]));
      sum += weights[i];
      cumulative[i] = sum;
    }
    this.keep = new long[n];
    this.alias = new int[n];
    if (sum > 0) {
      buildAlias(weights, sum);
    }
  }

  /**
   * Vose: scale every weight by n so a column holds {@code total}; pair each short column (under {@code total})
   * with a tall one that gives it the rest, until every column is full. Integers throughout, so nothing is lost to
   * rounding: weights are at most 10,000 × {@link #SCALE} and n at most a few hundred thousand, far below 2^63.
   */
  private void buildAlias(long[] weights, long total) {
    int n = weights.length;
    long[] scaled = new long[n];
    int[] small = new int[n];
    int[] large = new int[n];
    int smalls = 0;
    int larges = 0;
    for (int i = 0; i < n; i++) {
      scaled[i] = weights[i] * n;
      alias[i] = i;
      if (scaled[i] < total) {
        small[smalls++] = i;
      } else {
        large[larges++] = i;
      }
    }
    while (smalls > 0 && larges > 0) {
      int s = small[--smalls];
      int g = large[--larges];
      keep[s] = scaled[s];
      alias[s] = g;
      scaled[g] -= total - scaled[s];
      if (scaled[g] < total) {
        small[smalls++] = g;
      } else {
        large[larges++] = g;
      }
    }
    while (larges > 0) {
      keep[large[--larges]] = total;
    }
    while (smalls > 0) { // cannot happen with exact integers; kept so a column never points nowhere
      keep[small[--smalls]] = total;
    }
  }

  /**
   * For tests: each candidate's chance under the alias table, as a numerator over {@code n × total}; equal to
   * {@code n × weight(i)} when the table is right.
   */
  long[] aliasProbabilityNumerators() {
    int n = candidates.length;
    long total = n == 0 ? 0 : cumulative[n - 1];
    long[] out = new long[n];
    for (int c = 0; c < n; c++) {
      out[c] += keep[c];
      out[alias[c]] += total - keep[c];
    }
    return out;
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
        i = i == skip ? (i + 1) % n : i;
        if (admit != null && admit[i] < 1.0 && random.nextDouble() >= admit[i]) {
          i = (i + 1) % n;
          i = i == skip ? (i + 1) % n : i;
        }
        return candidates[i];
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
        a = unskip(a, skip);
        b = unskip(b, skip);
        if (admit != null) {
          boolean inA = admit[a] >= 1.0 || random.nextDouble() < admit[a];
          boolean inB = admit[b] >= 1.0 || random.nextDouble() < admit[b];
          if (inA != inB) {
            return candidates[inA ? a : b];
          }
        }
        return lessLoaded(candidates[a], candidates[b]);
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
    if (skip < 0) {
      int c = random.nextInt(n);
      return candidates[random.nextLong(total) < keep[c] ? c : alias[c]];
    }
    long x = random.nextLong(total);
    if (x >= skipStart) {
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
   * The less loaded of two candidates, {@code a} on a tie ({@code a} is the first of two random draws, so a tie is a
   * coin flip). Load is {@code (inFlight + 1) × latency}, as in {@link EndpointState#score()}, except that the
   * latency ratio counts only by how much it exceeds {@link #NOISE} standard errors of the two estimates (a soft
   * threshold): equally fast endpoints, whose estimates differ by noise, then tie and share the calls, while a
   * clearly slower one still loses. Without a sample on either side, or when either's last sample is older than a
   * tenth of the decay ({@link EndpointState#isCurrent}), the latency does not count at all (in flight decides): a
   * stale estimate is no evidence, and one call refreshes it.
   *
   * <p>Why (issue 34, item 6): one call at a time leaves nothing in flight, and with two endpoints both are compared
   * on every pick, so the lower latency estimate won every pick. The loser was never sampled again, so its estimate
   * (often one early answer) was never corrected: 999 of 1,000 calls to one endpoint in {@code BalancerSpreadTest}.
   * Ties were already random, but two noisy estimates never tie exactly. Fading the idle loser's latency toward zero
   * (the old rule) made a long-idle endpoint look nearly infinitely fast; toward the tier's mean, it would stay above
   * the winner of two, and a slow endpoint above every fast one, for good. Fading its evidence makes it a coin flip.
   */
  private static EndpointState lessLoaded(EndpointState a, EndpointState b) {
    double load = (b.inFlight() + 1.0) / (a.inFlight() + 1.0);
    long now = a.nowNanos(); // one clock read per pick: both states run on the balancer's ticker
    if (a.hasLatencySample() && b.hasLatencySample() && a.isCurrent(now) && b.isCurrent(now)) {
      double logRatio = Math.log((b.ewmaNanos() + 1.0) / (a.ewmaNanos() + 1.0));
      double excess = Math.abs(logRatio) - NOISE * Math.sqrt(a.latencyVariance(now) + b.latencyVariance(now));
      if (excess > 0) {
        load *= Math.exp(Math.copySign(excess, logRatio));
      }
    }
    return load < 1.0 - TIE ? b : a;
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
