package dev.muster.grpc;

import static io.grpc.ConnectivityState.CONNECTING;
import static io.grpc.ConnectivityState.IDLE;
import static io.grpc.ConnectivityState.READY;
import static io.grpc.ConnectivityState.SHUTDOWN;
import static io.grpc.ConnectivityState.TRANSIENT_FAILURE;

import dev.muster.balance.Balancer;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointSet;
import dev.muster.call.Scheduler;
import dev.muster.health.HealthEvent;
import dev.muster.health.ProbeConfig;
import dev.muster.health.Prober;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.time.Duration;
import java.time.Instant;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/*
 * Two pickers, one inside the other. Muster's Balancer keeps its own immutable picker over every instance of the
 * set (weights, zones, DRAINING, ejections; it rebuilds itself when the detector ejects or un-ejects). This class
 * adds what only gRPC knows — which subchannels are READY — and hands the channel a MusterPicker that holds an
 * immutable map of the READY ones: a pick asks the balancer, and takes its choice if that one is READY; otherwise it
 * asks again (a few times), then falls back to any READY subchannel, preferring ones neither ejected nor avoided.
 *
 * Outcomes flow back through a ClientStreamTracer on each picked stream (OutcomeTracer), which reports to the
 * balancer's detector from the transport thread (Balancer and OutlierDetector are thread-safe), so an ejection
 * takes effect at the next pick without a new picker.
 *
 * The same policy as every Muster consumer (issue 34): the balancer is built on the helper's scheduler and hears the
 * resolver's staleness (STALE_SINCE) as a cache's listener would, so maxStale with FAIL_CLOSED fails picks with
 * UNAVAILABLE and KEEP_FAILING_ENDPOINTS_OUT restricts them; a Prober (the config's "probe", gRPC health by default
 * kind) feeds the balancer its verdicts as in MusterClient. Both are replaced with the config, closed at shutdown.
 */
/**
 * The {@code muster} policy's balancer for one channel: one subchannel per resolved instance, created, replaced and
 * shut down as the set changes.
 *
 * <p>Not thread-safe: every method, and every subchannel state callback, runs in the channel's synchronization
 * context. The pickers it publishes are immutable and may be used from any thread.
 */
final class MusterLoadBalancer extends LoadBalancer {
  private static final Logger log = LoggerFactory.getLogger(MusterLoadBalancer.class);

  private final Helper helper;
  private final LongSupplier nanoTime;

  // Only in the synchronization context.
  private MusterLoadBalancerProvider.Config config;
  private Balancer balancer;
  private Prober prober; // null: no probes
  private EndpointSet set = EndpointSet.EMPTY;
  private Instant staleSince; // the resolver's STALE_SINCE of the last result, null while fresh
  private long revision;
  private final Map<InstanceKey, Entry> entries = new LinkedHashMap<>();
  private Status lastFailure = Status.UNAVAILABLE.withDescription("no connection attempted yet");

  MusterLoadBalancer(Helper helper) {
    this(helper, System::nanoTime);
  }

  MusterLoadBalancer(Helper helper, LongSupplier nanoTime) {
    this.helper = helper;
    this.nanoTime = nanoTime;
  }

  /** One instance: its address group and its subchannel. */
  private static final class Entry {
    final InstanceKey key;
    final EquivalentAddressGroup group;
    final Subchannel subchannel;
    ConnectivityStateInfo state = ConnectivityStateInfo.forNonError(IDLE);

    Entry(InstanceKey key, EquivalentAddressGroup group, Subchannel subchannel) {
      this.key = key;
      this.group = group;
      this.subchannel = subchannel;
    }
  }

  @Override
  public Status acceptResolvedAddresses(ResolvedAddresses resolved) {
    Object policyConfig = resolved.getLoadBalancingPolicyConfig();
    MusterLoadBalancerProvider.Config next = policyConfig instanceof MusterLoadBalancerProvider.Config c
        ? c : MusterLoadBalancerProvider.Config.defaults();
    List<Instance> instances = new ArrayList<>();
    Map<InstanceKey, EquivalentAddressGroup> groups = new HashMap<>();
    for (EquivalentAddressGroup group : resolved.getAddresses()) {
      Instance instance = group.getAttributes().get(MusterAttributes.INSTANCE);
      if (instance == null) {
        Status status = Status.UNAVAILABLE.withDescription("the muster policy needs a muster:/// target (address "
            + group.getAddresses() + " carries no Muster instance)");
        handleNameResolutionError(status);
        return status;
      }
      if (groups.put(instance.key(), group) == null) {
        instances.add(instance);
      }
    }
    if (balancer == null || !next.equals(config)) {
      config = next; // a new config starts over: fresh endpoint states and ejections under the new rules
      closePolicy();
      String service = helper.getAuthority();
      balancer = Balancer.builder(next.balancer()).detector(new OutlierDetector(next.outlier(), nanoTime))
          .ticker(nanoTime).service(service)
          .scheduler(next.balancer().maxStale() == null ? null : Scheduler.of(helper.getScheduledExecutorService()))
          .events(MusterLoadBalancer::log).build();
      prober = next.probe() == null ? null : Prober.start(service, next.probe(),
          next.probe().kind() == ProbeConfig.Kind.GRPC ? new GrpcHealthProbe(next.probe()) : null, null,
          java.util.concurrent.ThreadLocalRandom::current, balancer, MusterLoadBalancer::log);
      set = EndpointSet.EMPTY;
      staleSince = null;
    }
    EndpointSet before = set;
    set = EndpointSet.of(++revision, instances);
    balancer.update(set);
    if (prober != null) {
      prober.update(set, EndpointDelta.between(before.isEmpty() ? EndpointDelta.Kind.SNAPSHOT
          : EndpointDelta.Kind.UPDATE, before, set));
    }
    Instant stale = resolved.getAttributes().get(MusterAttributes.STALE_SINCE);
    if (stale != null) {
      balancer.onStale(set, stale, "the muster:/// resolver's registry is unreachable");
    } else if (staleSince != null) {
      balancer.onRecovered(set, Duration.between(staleSince, Instant.now()));
    }
    staleSince = stale;

    for (Iterator<Entry> it = entries.values().iterator(); it.hasNext(); ) {
      Entry e = it.next();
      EquivalentAddressGroup group = groups.get(e.key);
      if (group == null || !group.getAddresses().equals(e.group.getAddresses())) {
        it.remove();
        e.subchannel.shutdown();
      }
    }
    for (Instance instance : instances) {
      if (!entries.containsKey(instance.key())) {
        entries.put(instance.key(), open(instance.key(), groups.get(instance.key())));
      }
    }
    publish();
    return Status.OK;
  }

  private Entry open(InstanceKey key, EquivalentAddressGroup group) {
    Subchannel subchannel = helper.createSubchannel(CreateSubchannelArgs.newBuilder().setAddresses(group).build());
    Entry entry = new Entry(key, group, subchannel);
    subchannel.start(info -> onState(entry, info));
    subchannel.requestConnection();
    return entry;
  }

  private void onState(Entry entry, ConnectivityStateInfo info) {
    if (entries.get(entry.key) != entry || info.getState() == SHUTDOWN) {
      return; // a subchannel already replaced or shut down
    }
    entry.state = info;
    if (info.getState() == TRANSIENT_FAILURE) {
      lastFailure = info.getStatus();
    }
    if (info.getState() == IDLE) {
      entry.subchannel.requestConnection(); // keep every instance connected: the balancer, not gRPC, chooses
    }
    publish();
  }

  private void publish() {
    Map<InstanceKey, Subchannel> ready = new HashMap<>();
    boolean connecting = false;
    for (Entry e : entries.values()) {
      if (e.state.getState() == READY) {
        ready.put(e.key, e.subchannel);
      } else if (e.state.getState() == CONNECTING || e.state.getState() == IDLE) {
        connecting = true;
      }
    }
    if (!ready.isEmpty()) {
      helper.updateBalancingState(READY, new MusterPicker(balancer, ready));
    } else if (connecting) {
      helper.updateBalancingState(CONNECTING, new FixedPicker(PickResult.withNoResult()));
    } else if (entries.isEmpty()) {
      helper.updateBalancingState(TRANSIENT_FAILURE, new FixedPicker(PickResult.withError(
          Status.UNAVAILABLE.withDescription("no instance of the service is registered and UP"))));
    } else {
      helper.updateBalancingState(TRANSIENT_FAILURE, new FixedPicker(PickResult.withError(
          Status.UNAVAILABLE.withDescription("no instance is reachable; last failure: " + lastFailure)
              .withCause(lastFailure.getCause()))));
    }
  }

  /** An empty set is news (every instance left or is DRAINING): its subchannels must go, not be kept. */
  @Override
  public boolean canHandleEmptyAddressListFromNameResolution() {
    return true;
  }

  @Override
  public void handleNameResolutionError(Status error) {
    if (entries.isEmpty()) {
      helper.updateBalancingState(TRANSIENT_FAILURE, new FixedPicker(PickResult.withError(error)));
    }
    // with instances, keep them: the muster:/// resolver never reports an error while it holds a set anyway
  }

  @Override
  public void requestConnection() {
    for (Entry e : entries.values()) {
      if (e.state.getState() == IDLE) {
        e.subchannel.requestConnection();
      }
    }
  }

  @Override
  public void shutdown() {
    for (Entry e : entries.values()) {
      e.subchannel.shutdown();
    }
    entries.clear();
    closePolicy();
  }

  private void closePolicy() {
    if (prober != null) {
      prober.close();
      prober = null;
    }
    if (balancer != null) {
      balancer.close();
    }
  }

  /** WARN for what takes endpoints or calls away (probe down, panic, maxStale reached), INFO for the rest. */
  private static void log(HealthEvent e) {
    boolean bad = e.type() == HealthEvent.Type.PROBE_DOWN || e.type() == HealthEvent.Type.PANIC_ON
        || e.type() == HealthEvent.Type.MAX_STALE_REACHED;
    String what = e.instance() == null ? e.service() : e.service() + "/" + e.instance();
    if (bad) {
      log.warn("muster policy: {} {}: {}", e.type(), what, e.detail());
    } else {
      log.info("muster policy: {} {}: {}", e.type(), what, e.detail());
    }
  }

  /** The current balancer, for tests (its detector's counters). */
  Balancer balancer() {
    return balancer;
  }

  /** A picker that always answers the same. */
  static final class FixedPicker extends SubchannelPicker {
    private final PickResult result;

    FixedPicker(PickResult result) {
      this.result = result;
    }

    @Override
    public PickResult pickSubchannel(PickSubchannelArgs args) {
      return result;
    }

    @Override
    public String toString() {
      return "FixedPicker(" + result + ")";
    }
  }
}
