package dev.muster.grpc;

import dev.muster.ErrorCode;
import dev.muster.MusterException;
import dev.muster.cache.EndpointCache;
import dev.muster.cache.EndpointDelta;
import dev.muster.cache.EndpointListener;
import dev.muster.cache.EndpointSet;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceState;
import io.grpc.Attributes;
import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.StatusOr;
import io.grpc.SynchronizationContext;
import java.net.InetSocketAddress;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

/*
 * Stale-while-error, as the cache already does it, carried to gRPC: the cache keeps serving its last set while etcd
 * is unreachable, so this resolver only has to keep re-sending that set (marked STALE_SINCE) and never tell the
 * channel "error" while it holds one — a channel told onError by a resolver that once had addresses keeps them
 * anyway, but its balancer may drop into TRANSIENT_FAILURE and a pick_first channel fails its calls. An error is
 * reported only while no set was ever known: etcd unreachable from the start (UNAVAILABLE) or the cache refused
 * (PERMISSION_DENIED / UNAUTHENTICATED, with the cache's message).
 *
 * Threads: the cache calls the EndpointListener through its notifier (one call at a time, in order, on a
 * delivery-pool thread); every callback only copies what it was given into a task for the channel's
 * SynchronizationContext, where all state of this class lives. Nothing blocks there: registry.open() returns at
 * once, and the cache is closed on the offload executor.
 */
/**
 * The {@code muster:///} resolver of one channel: an {@link EndpointCache} of the target's service, each change
 * delivered as one {@link EquivalentAddressGroup} per {@code UP} instance.
 *
 * <p>Not thread-safe: {@link #start}, {@link #refresh} and {@link #shutdown} are called from the channel's
 * synchronization context, and every other piece of state is touched only there.
 */
final class MusterNameResolver extends NameResolver {
  private final MusterTarget target;
  private final MusterNameResolverProvider.RegistryLease lease;
  private final SynchronizationContext syncContext;
  private final ServiceConfigParser serviceConfigParser;
  private final Executor offload;
  private final LongAdder staleResults;

  // Only in the synchronization context.
  private Listener2 listener;
  private EndpointCache cache;
  private List<EquivalentAddressGroup> held; // the last set from the cache (UP instances), null until the first
  private Instant staleSince;
  private String staleReason;
  private MusterException failure;
  private boolean shutdown;

  MusterNameResolver(MusterTarget target, MusterNameResolverProvider.RegistryLease lease, Args args,
      LongAdder staleResults) {
    this.target = target;
    this.lease = lease;
    this.syncContext = args.getSynchronizationContext();
    this.serviceConfigParser = args.getServiceConfigParser();
    this.offload = args.getOffloadExecutor();
    this.staleResults = staleResults;
  }

  @Override
  public String getServiceAuthority() {
    return target.service();
  }

  @Override
  public void start(Listener2 listener) {
    if (this.listener != null) {
      throw new IllegalStateException("already started");
    }
    this.listener = listener;
    try {
      cache = lease.registry().open(target.cacheConfig(lease.trusted()), new ToSyncContext());
    } catch (RuntimeException e) {
      listener.onError(Status.UNAVAILABLE.withDescription("muster:///" + target.service()
          + ": could not watch the registry: " + e.getMessage()).withCause(e));
    }
  }

  @Override
  public void refresh() {
    if (listener == null || shutdown) {
      return;
    }
    if (held != null) {
      deliver(); // the cache pushes every change; a refresh (e.g. after a failed connection) only re-sends the set
    } else if (failure != null || staleReason != null) {
      reportNoSet();
    }
  }

  @Override
  public void shutdown() {
    if (shutdown) {
      return;
    }
    shutdown = true;
    EndpointCache c = cache;
    cache = null;
    Runnable close = () -> {
      if (c != null) {
        c.close();
      }
      lease.release();
    };
    if (offload != null) {
      offload.execute(close);
    } else {
      close.run();
    }
  }

  private void onChange(List<EquivalentAddressGroup> groups) {
    held = groups;
    deliver();
  }

  private void onStale(Instant since, String reason) {
    staleSince = since;
    staleReason = reason;
    if (held != null) {
      deliver();
    } else {
      reportNoSet();
    }
  }

  private void onRecovered() {
    staleSince = null;
    staleReason = null;
    if (held != null) {
      deliver();
    }
  }

  private void onFailed(MusterException why) {
    failure = why;
    if (held != null) {
      staleSince = staleSince == null ? Instant.now() : staleSince;
      deliver(); // a refused cache keeps its last set: so do we, stale
    } else {
      reportNoSet();
    }
  }

  private void deliver() {
    Attributes.Builder attrs = Attributes.newBuilder();
    if (staleSince != null) {
      attrs.set(MusterAttributes.STALE_SINCE, staleSince);
      staleResults.increment();
    }
    ResolutionResult.Builder result = ResolutionResult.newBuilder()
        .setAddressesOrError(StatusOr.fromValue(held))
        .setAttributes(attrs.build());
    if (serviceConfigParser != null) {
      result.setServiceConfig(serviceConfigParser.parseServiceConfig(serviceConfig()));
    }
    listener.onResult2(result.build());
  }

  private void reportNoSet() {
    Status status;
    if (failure != null) {
      Status base = failure.code() == ErrorCode.AUTHENTICATION_FAILED ? Status.UNAUTHENTICATED
          : failure.code() == ErrorCode.PERMISSION_DENIED ? Status.PERMISSION_DENIED : Status.UNAVAILABLE;
      status = base.withDescription("muster:///" + target.service() + ": " + failure.getMessage());
    } else {
      status = Status.UNAVAILABLE.withDescription("muster:///" + target.service()
          + ": no endpoint set yet and the registry is unreachable: " + staleReason);
    }
    listener.onError(status);
  }

  /** Proposes the {@code muster} policy, with the target's zone, staleness bound and probe. */
  private Map<String, ?> serviceConfig() {
    return Map.of("loadBalancingConfig", List.of(Map.of(MusterLoadBalancerProvider.POLICY, target.policyConfig())));
  }

  /**
   * One group per instance that takes calls ({@code DRAINING} and {@code STARTING} ones left out). Runs on the cache's
   * notifier (a delivery-pool thread), not in the synchronization context: an address that is a host name is looked
   * up here.
   */
  static List<EquivalentAddressGroup> groups(EndpointSet set) {
    List<EquivalentAddressGroup> groups = new ArrayList<>(set.size());
    for (Instance instance : set.instances()) {
      if (instance.state().takesNewCalls()) { // not DRAINING, not STARTING
        groups.add(group(instance));
      }
    }
    return List.copyOf(groups);
  }

  static EquivalentAddressGroup group(Instance instance) {
    Attributes.Builder a = Attributes.newBuilder()
        .set(MusterAttributes.INSTANCE, instance)
        .set(MusterAttributes.INSTANCE_ID, instance.id())
        .set(MusterAttributes.WEIGHT, instance.weight())
        .set(MusterAttributes.TAGS, instance.tags())
        .set(MusterAttributes.METADATA, instance.metadata());
    if (instance.zone() != null) {
      a.set(MusterAttributes.ZONE, instance.zone());
    }
    if (instance.region() != null) {
      a.set(MusterAttributes.REGION, instance.region());
    }
    // The address as registered: an IP literal is parsed, a host name looked up (off the synchronization context).
    InetSocketAddress address = new InetSocketAddress(instance.address(), instance.port());
    return new EquivalentAddressGroup(address, a.build());
  }

  /** The cache's callbacks, each handed to the synchronization context as it comes (on the notifier, fast). */
  private final class ToSyncContext implements EndpointListener {
    @Override
    public void onChange(EndpointSet set, EndpointDelta delta) {
      List<EquivalentAddressGroup> groups = groups(set);
      run(r -> r.onChange(groups));
    }

    @Override
    public void onStale(EndpointSet set, Instant since, String reason) {
      run(r -> r.onStale(since, reason));
    }

    @Override
    public void onRecovered(EndpointSet set, java.time.Duration staleFor) {
      run(r -> r.onRecovered());
    }

    @Override
    public void onFailed(EndpointSet set, MusterException why) {
      run(r -> r.onFailed(why));
    }

    private void run(Consumer<MusterNameResolver> task) {
      syncContext.execute(() -> {
        if (!shutdown) {
          task.accept(MusterNameResolver.this);
        }
      });
    }
  }
}
