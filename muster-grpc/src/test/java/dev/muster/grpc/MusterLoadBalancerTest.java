package dev.muster.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.ConnectivityState;
import io.grpc.ConnectivityStateInfo;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.ResolvedAddresses;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.LoadBalancer.SubchannelStateListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import dev.muster.grpc.echo.Echo;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The muster policy against a fake Helper: subchannels per instance, picks among READY ones, ejection, avoid. */
class MusterLoadBalancerTest {
  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final FakeHelper helper = new FakeHelper();
  private final MusterLoadBalancer lb = new MusterLoadBalancer(helper, nanos::get);

  private static Instance instance(String id, int port) {
    return Instance.of("echo", "127.0.0.1", port).id(id);
  }

  private Status accept(Instance... instances) {
    List<EquivalentAddressGroup> groups = new ArrayList<>();
    for (Instance i : instances) {
      groups.add(MusterNameResolver.group(i));
    }
    return lb.acceptResolvedAddresses(ResolvedAddresses.newBuilder().setAddresses(groups)
        .setLoadBalancingPolicyConfig(MusterLoadBalancerProvider.Config.defaults()).build());
  }

  @Test
  void oneSubchannelPerInstanceIsCreatedAndConnectedAndARemovedInstancesSubchannelIsShutDown() {
    assertThat(accept(instance("a", 1001), instance("b", 1002))).isEqualTo(Status.OK);
    assertThat(helper.subchannels).hasSize(2);
    assertThat(helper.subchannels.values()).allMatch(s -> s.started && s.connectionRequests == 1);
    assertThat(helper.state).isEqualTo(ConnectivityState.CONNECTING);

    accept(instance("b", 1002), instance("c", 1003));
    assertThat(helper.subchannels.get("a").shutdown).isTrue();
    assertThat(helper.subchannels.get("b").shutdown).isFalse();
    assertThat(helper.subchannels).containsKey("c");
  }

  @Test
  void pastMaxStaleWithFailClosedPicksFailWithUnavailableAndTheNextFreshResultLiftsIt() {
    MusterLoadBalancerProvider.Config config = MusterLoadBalancerProvider.parse(java.util.Map.of("maxStale", "30s"));
    java.time.Instant since = java.time.Instant.now();
    List<EquivalentAddressGroup> groups = List.of(MusterNameResolver.group(instance("a", 1001)));
    lb.acceptResolvedAddresses(ResolvedAddresses.newBuilder().setAddresses(groups).setLoadBalancingPolicyConfig(config)
        .setAttributes(io.grpc.Attributes.newBuilder().set(MusterAttributes.STALE_SINCE, since).build()).build());
    helper.ready("a");
    assertThat(helper.picker.pickSubchannel(args(CallOptions.DEFAULT)).getSubchannel()).isNotNull();

    nanos.addAndGet(java.time.Duration.ofSeconds(30).toNanos()); // no timer needed: the picker is timed to maxStale
    PickResult refused = helper.picker.pickSubchannel(args(CallOptions.DEFAULT));
    assertThat(refused.getSubchannel()).as("no fallback to a READY subchannel either").isNull();
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refused.getStatus().getDescription()).contains("over maxStale 30 s").contains("FAIL_CLOSED");

    lb.acceptResolvedAddresses(ResolvedAddresses.newBuilder().setAddresses(groups).setLoadBalancingPolicyConfig(config)
        .build()); // fresh: no STALE_SINCE
    assertThat(helper.picker.pickSubchannel(args(CallOptions.DEFAULT)).getSubchannel()).isNotNull();
    lb.shutdown();
  }

  @Test
  void picksGoOnlyToReadySubchannels() {
    accept(instance("a", 1001), instance("b", 1002), instance("c", 1003));
    helper.ready("b");
    assertThat(helper.state).isEqualTo(ConnectivityState.READY);
    for (int i = 0; i < 100; i++) {
      assertThat(pickId(CallOptions.DEFAULT)).isEqualTo("b");
    }
    helper.fail("b");
    assertThat(helper.state).isEqualTo(ConnectivityState.CONNECTING); // a and c are still connecting
    assertThat(helper.picker.pickSubchannel(args(CallOptions.DEFAULT)).hasResult()).isFalse();
  }

  @Test
  void allSubchannelsInTransientFailureFailTheCallWithUnavailable() {
    accept(instance("a", 1001));
    helper.fail("a");
    assertThat(helper.state).isEqualTo(ConnectivityState.TRANSIENT_FAILURE);
    PickResult r = helper.picker.pickSubchannel(args(CallOptions.DEFAULT));
    assertThat(r.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(r.getStatus().getDescription()).contains("connection refused");
  }

  @Test
  void staticWeightsShareThePicks() {
    accept(instance("a", 1001).weight(100), instance("b", 1002).weight(300));
    helper.ready("a");
    helper.ready("b");
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 4000; i++) {
      counts.merge(pickId(CallOptions.DEFAULT), 1, Integer::sum);
    }
    assertThat(counts.get("b") / (double) counts.get("a")).isBetween(2.4, 3.8);
  }

  @Test
  void anUnavailableStreamEjectsItsEndpointSoLaterPicksGoElsewhere() {
    accept(instance("a", 1001), instance("b", 1002));
    helper.ready("a");
    helper.ready("b");
    PickResult r;
    do {
      r = helper.picker.pickSubchannel(args(CallOptions.DEFAULT));
    } while (r.getSubchannel() != helper.subchannels.get("a").self);
    ClientStreamTracer tracer = r.getStreamTracerFactory()
        .newClientStreamTracer(ClientStreamTracer.StreamInfo.newBuilder().build(), new Metadata());
    tracer.streamClosed(Status.UNAVAILABLE.withDescription("connection reset"));

    assertThat(lb.balancer().detector().ejections()).isEqualTo(1);
    for (int i = 0; i < 100; i++) {
      assertThat(pickId(CallOptions.DEFAULT)).isEqualTo("b");
    }
    nanos.addAndGet(31_000_000_000L); // past the 30 s base ejection time
    Map<String, Integer> counts = new HashMap<>();
    for (int i = 0; i < 200; i++) {
      counts.merge(pickId(CallOptions.DEFAULT), 1, Integer::sum);
    }
    assertThat(counts).containsKey("a");
  }

  @Test
  void aRetryAvoidsTheEndpointOfTheFailedAttemptAndLearnsWhereItWent() {
    accept(instance("a", 1001), instance("b", 1002), instance("c", 1003));
    helper.ready("a");
    helper.ready("b");
    helper.ready("c");
    InstanceKey a = instance("a", 1001).key();
    for (int i = 0; i < 200; i++) {
      MusterRetryInterceptor.Attempt attempt = new MusterRetryInterceptor.Attempt(a, false);
      String id = pickId(CallOptions.DEFAULT.withOption(MusterRetryInterceptor.ATTEMPT, attempt));
      assertThat(id).isNotEqualTo("a");
      assertThat(attempt.picked().id()).isEqualTo(id);
    }
  }

  @Test
  void addressesWithoutAMusterInstanceAreRefusedWithAStatusNamingTheTarget() {
    EquivalentAddressGroup plain = new EquivalentAddressGroup(new java.net.InetSocketAddress("127.0.0.1", 1));
    Status s = lb.acceptResolvedAddresses(ResolvedAddresses.newBuilder().setAddresses(List.of(plain)).build());
    assertThat(s.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(s.getDescription()).contains("muster:///");
    assertThat(helper.state).isEqualTo(ConnectivityState.TRANSIENT_FAILURE);
  }

  @Test
  void anEmptySetShutsEverySubchannelDownAndFailsPicksWithUnavailable() {
    accept(instance("a", 1001));
    helper.ready("a");
    assertThat(lb.canHandleEmptyAddressListFromNameResolution()).isTrue();
    accept();
    assertThat(helper.subchannels.get("a").shutdown).isTrue();
    assertThat(helper.state).isEqualTo(ConnectivityState.TRANSIENT_FAILURE);
    assertThat(helper.picker.pickSubchannel(args(CallOptions.DEFAULT)).getStatus().getDescription())
        .contains("no instance");
  }

  @Test
  void shutdownShutsEverySubchannelDown() {
    accept(instance("a", 1001), instance("b", 1002));
    lb.shutdown();
    assertThat(helper.subchannels.values()).allMatch(s -> s.shutdown);
  }

  private String pickId(CallOptions options) {
    PickResult r = helper.picker.pickSubchannel(args(options));
    assertThat(r.getStatus().isOk()).as("pick %s", r).isTrue();
    return r.getSubchannel().getAddresses().getAttributes().get(MusterAttributes.INSTANCE_ID);
  }

  @Test
  void picksOfOneEndpointShareOneImmutableResultSoAPickAllocatesNothing() {
    accept(instance("a", 1001));
    helper.ready("a");
    PickResult first = helper.picker.pickSubchannel(args(CallOptions.DEFAULT));
    PickResult second = helper.picker.pickSubchannel(args(CallOptions.DEFAULT));
    assertThat(second).isSameAs(first);
    assertThat(first.getSubchannel()).isSameAs(helper.subchannels.get("a").self);
    assertThat(first.getStreamTracerFactory()).isInstanceOf(OutcomeTracer.class);
  }

  private static PickSubchannelArgs args(CallOptions options) {
    return new PickSubchannelArgs() {
      @Override
      public CallOptions getCallOptions() {
        return options;
      }

      @Override
      public Metadata getHeaders() {
        return new Metadata();
      }

      @Override
      public MethodDescriptor<?, ?> getMethodDescriptor() {
        return Echo.SAY;
      }
    };
  }

  private static final class FakeHelper extends LoadBalancer.Helper {
    final Map<String, FakeSubchannel> subchannels = new HashMap<>();
    final SynchronizationContext sync = new SynchronizationContext((t, e) -> {
      throw new AssertionError(e);
    });
    ConnectivityState state;
    SubchannelPicker picker;

    @Override
    public Subchannel createSubchannel(LoadBalancer.CreateSubchannelArgs args) {
      FakeSubchannel s = new FakeSubchannel(args.getAddresses().get(0));
      subchannels.put(args.getAddresses().get(0).getAttributes().get(MusterAttributes.INSTANCE_ID), s);
      return s.self;
    }

    void ready(String id) {
      subchannels.get(id).listener.onSubchannelState(ConnectivityStateInfo.forNonError(ConnectivityState.READY));
    }

    void fail(String id) {
      subchannels.get(id).listener.onSubchannelState(
          ConnectivityStateInfo.forTransientFailure(Status.UNAVAILABLE.withDescription("connection refused")));
    }

    @Override
    public void updateBalancingState(ConnectivityState newState, SubchannelPicker newPicker) {
      state = newState;
      picker = newPicker;
    }

    @Override
    public ManagedChannel createOobChannel(EquivalentAddressGroup eag, String authority) {
      throw new UnsupportedOperationException();
    }

    @Override
    public String getAuthority() {
      return "echo";
    }

    @Override
    public SynchronizationContext getSynchronizationContext() {
      return sync;
    }

    /** The maxStale timer's: never due within a test (the picker reaches maxStale by itself). */
    @Override
    public java.util.concurrent.ScheduledExecutorService getScheduledExecutorService() {
      return TIMERS;
    }
  }

  private static final java.util.concurrent.ScheduledExecutorService TIMERS =
      java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lb-test-timers");
        t.setDaemon(true);
        return t;
      });

  private static final class FakeSubchannel {
    final EquivalentAddressGroup group;
    SubchannelStateListener listener;
    boolean started;
    boolean shutdown;
    int connectionRequests;
    final Subchannel self = new Subchannel() {
      @Override
      public void start(SubchannelStateListener l) {
        started = true;
        listener = l;
      }

      @Override
      public void shutdown() {
        shutdown = true;
      }

      @Override
      public void requestConnection() {
        connectionRequests++;
      }

      @Override
      public List<EquivalentAddressGroup> getAllAddresses() {
        return List.of(group);
      }

      @Override
      public Attributes getAttributes() {
        return Attributes.EMPTY;
      }
    };

    FakeSubchannel(EquivalentAddressGroup group) {
      this.group = group;
    }
  }
}
