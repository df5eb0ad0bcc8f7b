package dev.muster.balance;

import dev.muster.outlier.OutlierState;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/*
 * How the candidates are chosen, at build time (never on the pick path):
 *
 *   available = not ejected and UP (not STARTING, not DRAINING)
 *   none available (but some ready)      -> panic: every endpoint that is not STARTING is a candidate, DRAINING and
 *                                           ejected included (a STARTING one asked not to be called: it may not
 *                                           even listen yet)
 *   local zone set, and at least minLocalShare of the local zone's endpoints (and at least one) available
 *                                        -> primary = the available local endpoints
 *   otherwise                            -> primary = every available endpoint, any zone
 *   in each tier, weight-0 endpoints are dropped when any candidate has a positive weight
 *
 * A retry that must avoid an endpoint first looks in the primary tier, then in the wider "any zone" tier, so a retry
 * can leave a zone that has a single healthy endpoint.
 */
/**
 * An immutable snapshot of who may be picked, built by {@link Balancer} whenever the set or an ejection changes and
 * swapped into a volatile field (grpc-java's picker design).
 *
 * <p>Immutable; {@link #pick} is lock-free and allocation-free.
 */
final class Picker {
  static final Picker EMPTY = new Picker(new EndpointState[0], List.of(), BalancerConfig.defaults(), new AtomicLong());

  private final BalancerConfig.Policy policy;
  private final AtomicLong roundRobin;
  private final Tier primary;
  private final Tier anyZone;
  final List<EndpointState> endpoints;
  final List<OutlierState> outliers;
  final boolean panicking;
  final boolean hasEjections;
  /** The earliest end of an ejection; the first pick at or after it rebuilds. Only valid if {@link #hasEjections}. */
  final long nextUnejectNanos;

  Picker(EndpointState[] all, List<OutlierState> outliers, BalancerConfig config, AtomicLong roundRobin) {
    this.policy = config.policy();
    this.roundRobin = roundRobin;
    this.endpoints = List.of(all);
    this.outliers = outliers;

    List<EndpointState> available = new ArrayList<>();
    List<EndpointState> ready = new ArrayList<>(); // everything but STARTING: the panic candidates
    boolean ejections = false;
    long nextUneject = 0;
    for (EndpointState e : all) {
      if (!e.isStarting()) {
        ready.add(e);
      }
      if (e.isEjected()) {
        long until = e.outlier().ejectedUntilNanos();
        nextUneject = !ejections || until - nextUneject < 0 ? until : nextUneject;
        ejections = true;
      } else if (e.isAvailable()) {
        available.add(e);
      }
    }
    this.hasEjections = ejections;
    this.nextUnejectNanos = nextUneject;
    this.panicking = !ready.isEmpty() && available.isEmpty();

    List<EndpointState> wide = panicking ? ready : available;
    List<EndpointState> local = panicking ? List.of() : local(all, available, config);
    this.anyZone = new Tier(preferPositiveWeight(wide));
    this.primary = local.isEmpty() ? anyZone : new Tier(preferPositiveWeight(local));
  }

  /** An endpoint other than {@code avoid} (null: any), or null when there is none. */
  EndpointState pick(RandomGenerator random, EndpointState avoid) {
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
