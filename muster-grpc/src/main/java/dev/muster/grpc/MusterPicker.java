package dev.muster.grpc;

import dev.muster.balance.Balancer;
import dev.muster.balance.EndpointState;
import dev.muster.registry.InstanceKey;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.Status;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Picks the subchannel of the instance the {@link Balancer} chooses, among the READY ones (see
 * {@link MusterLoadBalancer}'s design comment). A call made by {@link MusterRetryInterceptor} carries the endpoint its
 * retry must avoid and learns which endpoint it got.
 *
 * <p>Immutable and thread-safe: the READY map and the endpoint states are fixed at construction (the states' own
 * counters are atomic); the balancer is thread-safe.
 */
final class MusterPicker extends SubchannelPicker {
  /** Balancer choices tried before falling back to any READY subchannel. */
  private static final int BALANCER_TRIES = 3;

  private final Balancer balancer;
  private final Map<InstanceKey, Subchannel> ready;
  /**
   * One result per READY endpoint, made once: a pick hands out a shared immutable result (its tracer factory keeps
   * no per-pick state; each stream's tracer is made by the channel), so the hot path allocates nothing.
   */
  private final Map<InstanceKey, PickResult> results;
  private final Map<InstanceKey, EndpointState> states;
  private final EndpointState[] readyStates;
  private final AtomicInteger fallback = new AtomicInteger();

  MusterPicker(Balancer balancer, Map<InstanceKey, Subchannel> ready) {
    this.balancer = balancer;
    this.ready = Map.copyOf(ready);
    List<EndpointState> endpoints = balancer.endpoints();
    Map<InstanceKey, EndpointState> byKey = new HashMap<>();
    for (EndpointState e : endpoints) {
      byKey.put(e.key(), e);
    }
    this.states = Map.copyOf(byKey);
    this.readyStates = endpoints.stream().filter(e -> ready.containsKey(e.key())).toArray(EndpointState[]::new);
    Map<InstanceKey, PickResult> made = new HashMap<>();
    for (EndpointState e : readyStates) {
      made.put(e.key(), PickResult.withSubchannel(ready.get(e.key()), new OutcomeTracer(e, balancer.detector())));
    }
    this.results = Map.copyOf(made);
  }

  @Override
  public PickResult pickSubchannel(PickSubchannelArgs args) {
    MusterRetryInterceptor.Attempt attempt = args.getCallOptions().getOption(MusterRetryInterceptor.ATTEMPT);
    EndpointState avoid = attempt == null || attempt.avoid() == null ? null : states.get(attempt.avoid());
    for (int i = 0; i < BALANCER_TRIES; i++) {
      EndpointState e = avoid == null ? balancer.pick() : balancer.pick(avoid);
      if (e == null) {
        break;
      }
      PickResult result = results.get(e.key());
      if (result != null) {
        return picked(e, result, attempt);
      }
    }
    java.util.Optional<dev.muster.RegistryUnavailableException> refused = balancer.staleRefusal();
    if (refused.isPresent()) { // FAIL_CLOSED past maxStale: no fallback either
      return PickResult.withError(Status.UNAVAILABLE.withDescription(refused.get().getMessage()));
    }
    EndpointState e = fallback(avoid);
    return picked(e, results.get(e.key()), attempt);
  }

  /** A READY endpoint in turn: neither ejected nor avoided if there is one, else not avoided, else any. */
  private EndpointState fallback(EndpointState avoid) {
    int n = readyStates.length;
    int start = Math.floorMod(fallback.getAndIncrement(), n);
    EndpointState notAvoided = null;
    for (int i = 0; i < n; i++) {
      EndpointState e = readyStates[(start + i) % n];
      if (e != avoid) {
        if (e.isAvailable()) {
          return e;
        }
        notAvoided = notAvoided == null ? e : notAvoided;
      }
    }
    return notAvoided != null ? notAvoided : readyStates[start];
  }

  private static PickResult picked(EndpointState e, PickResult result, MusterRetryInterceptor.Attempt attempt) {
    if (attempt != null) {
      attempt.picked(e.key());
    }
    return result;
  }

  @Override
  public String toString() {
    return "MusterPicker(ready=" + ready.keySet() + ")";
  }
}
