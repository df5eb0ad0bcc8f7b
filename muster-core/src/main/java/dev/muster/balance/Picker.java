package dev.muster.balance;

import dev.muster.outlier.OutlierState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/*
 * How the candidates are chosen, at build time (never on the pick path):
 *
 *   set       = every endpoint; under KEEP_FAILING_ENDPOINTS_OUT (the registry stale past maxStale) only those whose
 *               last attempt succeeded within the window, unless none did (then every endpoint: never an empty set
 *               because of local judgement)
 *   up        = UP records in the set (not STARTING, not DRAINING: the provider decides those)
 *   available = up, not ejected, not down by probes
 *   (with panicRouting off, neither panic below happens: no available endpoint, no pick)
 *   none available (but some not STARTING) -> panic: every endpoint that is not STARTING is a candidate, DRAINING
 *                                           and ejected included (a STARTING one may not even listen yet)
 *   available < healthyPanicThreshold % of up -> panic (all-down protection, Envoy's healthy_panic_threshold): every
 *                                           up endpoint is a candidate, local judgement ignored
 *   local zone set, and at least minLocalShare of the local zone's endpoints (and at least one) available
 *                                        -> primary = the available local endpoints
 *   otherwise                            -> primary = every available endpoint, any zone
 *   in each tier, weight-0 endpoints are dropped when any candidate has a positive weight
 *   outside panic, a ramping endpoint (slow start) carries its share, BalancerConfig.slowStartFactor
 *
 * A retry that must avoid an endpoint first looks in the primary tier, then in the wider "any zone" tier, so a retry
 * can leave a zone that has a single healthy endpoint.
 *
 * The picker is rebuilt lazily when time changes it: at the earliest ejection end, while an endpoint ramps every
 * window / RAMP_STEPS, and when a stale registry reaches maxStale (a pick past nextRebuildNanos rebuilds). Under
 * FAIL_CLOSED past maxStale the picker refuses: no pick, no eligible endpoint.
 */
/**
 * An immutable snapshot of who may be picked, built by {@link Balancer} whenever the set, an ejection, a probe
 * verdict or the stale policy changes, and swapped into a volatile field (grpc-java's picker design).
 *
 * <p>Immutable; {@link #pick} is lock-free and allocation-free.
 */
final class Picker {
  /** No time of the balancer's own to rebuild at. */
  static final long NO_WAKE = Long.MIN_VALUE;
  static final Picker EMPTY = new Picker(new EndpointState[0], List.of(), BalancerConfig.defaults(), new AtomicLong(),
      0, -1, false, NO_WAKE);
  /** A ramp is re-evaluated this many times over the slow-start window. */
  static final int RAMP_STEPS = 50;

  private final BalancerConfig.Policy policy;
  private final AtomicLong roundRobin;
  private final Tier primary;
  private final Tier anyZone;
  final List<EndpointState> endpoints;
  final List<OutlierState> outliers;
  final boolean panicking;
  /** Routable (available) endpoints and UP ones, as counted for the panic threshold. */
  final int availableCount;
  final int upCount;
  /** True when time alone changes this picker: an ejection ends or a ramp moves on at {@link #nextRebuildNanos}. */
  final boolean timed;
  final long nextRebuildNanos;
  /** KEEP_FAILING_ENDPOINTS_OUT is in force. */
  final boolean restricted;
  /** FAIL_CLOSED is in force: no pick. */
  final boolean refusing;
  /** What a pick may choose from now (the widest tier), empty when refusing. */
  final List<EndpointState> eligible;

  /**
   * @param nowNanos the balancer's ticker now (ramp shares are worked out at it)
   * @param recentWindowNanos KEEP_FAILING_ENDPOINTS_OUT's window, or -1 when the policy is not in force
   * @param refusing FAIL_CLOSED is in force: nothing may be picked
   * @param wakeAtNanos a time the balancer needs a rebuild at (maxStale's end), or {@link #NO_WAKE}
   */
  Picker(EndpointState[] all, List<OutlierState> outliers, BalancerConfig config, AtomicLong roundRobin,
      long nowNanos, long recentWindowNanos, boolean refusing, long wakeAtNanos) {
    this.policy = config.policy();
    this.roundRobin = roundRobin;
    this.endpoints = List.of(all);
    this.outliers = outliers;
    this.restricted = recentWindowNanos >= 0;
    this.refusing = refusing;

    EndpointState[] set = all;
    boolean timedRebuild = wakeAtNanos != NO_WAKE;
    long next = timedRebuild ? wakeAtNanos : 0;
    if (recentWindowNanos >= 0) {
      EndpointState[] recent = java.util.Arrays.stream(all)
          .filter(e -> e.recentlySucceeded(nowNanos, recentWindowNanos)).toArray(EndpointState[]::new);
      if (recent.length > 0) {
        set = recent;
        for (EndpointState e : recent) { // a success ages out of the window: rebuild then
          long expires = e.lastSuccessNanos() + recentWindowNanos + 1;
          next = !timedRebuild || expires - next < 0 ? expires : next;
          timedRebuild = true;
        }
      }
    }
    List<EndpointState> available = new ArrayList<>();
    List<EndpointState> up = new ArrayList<>();
    List<EndpointState> ready = new ArrayList<>(); // everything but STARTING: the panic candidates
    for (EndpointState e : all) {
      if (e.isEjected()) {
        long until = e.outlier().ejectedUntilNanos();
        next = !timedRebuild || until - next < 0 ? until : next;
        timedRebuild = true;
      }
    }
    for (EndpointState e : set) {
      if (!e.isStarting()) {
        ready.add(e);
      }
      if (e.instance().state().takesNewCalls()) {
        up.add(e);
        if (e.isAvailable()) {
          available.add(e);
        }
      }
    }
    this.availableCount = available.size();
    this.upCount = up.size();
    boolean noneAvailable = config.panicRouting() && !ready.isEmpty() && available.isEmpty();
    boolean belowThreshold = config.panicRouting() && !available.isEmpty()
        && available.size() * 100L < (long) config.healthyPanicThreshold() * up.size();
    this.panicking = noneAvailable || belowThreshold;

    List<EndpointState> wide = noneAvailable ? ready : belowThreshold ? up : available;
    List<EndpointState> local = panicking ? List.of() : local(all, available, config);
    boolean ramps = false;
    if (!panicking) {
      long step = Math.max(1, config.slowStartWindow().toNanos() / RAMP_STEPS);
      for (EndpointState e : available) {
        if (e.ramping) {
          long at = nowNanos + step;
          next = !timedRebuild || at - next < 0 ? at : next;
          timedRebuild = true;
          ramps = true;
        }
      }
    }
    this.timed = timedRebuild;
    this.nextRebuildNanos = next;
    EndpointState[] widest = preferPositiveWeight(wide);
    this.eligible = refusing ? List.of() : List.of(widest);
    this.anyZone = tier(widest, ramps, config, nowNanos);
    this.primary = local.isEmpty() ? anyZone : tier(preferPositiveWeight(local), ramps, config, nowNanos);
  }

  private static Tier tier(EndpointState[] candidates, boolean ramps, BalancerConfig config, long nowNanos) {
    if (!ramps) {
      return new Tier(candidates, null);
    }
    double[] admit = new double[candidates.length];
    for (int i = 0; i < candidates.length; i++) {
      EndpointState e = candidates[i];
      admit[i] = e.ramping ? config.slowStartFactor(nowNanos - e.routableSinceNanos) : 1.0;
    }
    return new Tier(candidates, admit);
  }

  /** An endpoint other than {@code avoid} (null: any), or null when there is none. */
  EndpointState pick(RandomGenerator random, EndpointState avoid) {
    if (refusing) {
      return null;
    }
    EndpointState e = primary.pick(policy, roundRobin, random, avoid);
    if (e == null && primary != anyZone) {
      e = anyZone.pick(policy, roundRobin, random, avoid);
    }
    return e;
  }

  /** The available local-zone endpoints when they are enough to use alone, else an empty list. */
  private static List<EndpointState> local(EndpointState[] all, List<EndpointState> available, BalancerConfig config) {
    String zone = config.localZone();
    if (zone == null) {
      return List.of();
    }
    int inZone = 0;
    for (EndpointState e : all) {
      if (zone.equals(e.instance().zone())) {
        inZone++;
      }
    }
    List<EndpointState> usable = new ArrayList<>();
    for (EndpointState e : available) {
      if (zone.equals(e.instance().zone())) {
        usable.add(e);
      }
    }
    boolean enough = !usable.isEmpty() && usable.size() >= config.minLocalShare() * inZone - 1e-9;
    return enough ? usable : List.of();
  }

  private static EndpointState[] preferPositiveWeight(List<EndpointState> candidates) {
    EndpointState[] positive = candidates.stream()
        .filter(e -> e.instance().weight() > 0)
        .toArray(EndpointState[]::new);
    return positive.length > 0 ? positive : candidates.toArray(new EndpointState[0]);
  }
}
