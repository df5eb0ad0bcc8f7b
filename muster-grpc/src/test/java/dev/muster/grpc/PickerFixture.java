package dev.muster.grpc;

import dev.muster.balance.Balancer;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.LoadBalancer.SubchannelPicker;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@code muster} policy's picker as {@link MusterLoadBalancer} publishes it once every subchannel is READY, and
 * the call options of a retry, for muster-bench's {@code GrpcPickBenchmark}. The picker, the policy's config and the
 * retry's call option are package-private, and a benchmark belongs in muster-bench, not in this package: so this
 * class, and only this class, ships in muster-grpc's test jar (see the pom), and the benchmark measures the picker
 * through grpc-java's public {@link SubchannelPicker}.
 *
 * <p>Built as the balancer builds it: the policy's default config (weighted random, one zone) and a {@link Balancer}
 * updated with the whole set, over stub subchannels that are never started or connected (the picker only hands them
 * back). Thread-safe: stateless; the picker it returns is immutable.
 */
public final class PickerFixture {
  private PickerFixture() {}

  /** The picker over {@code instances}, every one with a READY subchannel. */
  public static SubchannelPicker ready(List<Instance> instances) {
    MusterLoadBalancerProvider.Config config = MusterLoadBalancerProvider.Config.defaults();
    Balancer balancer = new Balancer(config.balancer(), new OutlierDetector(config.outlier(), System::nanoTime),
        System::nanoTime, ThreadLocalRandom::current, null);
    Map<InstanceKey, Subchannel> ready = new HashMap<>();
    for (Instance instance : instances) {
      ready.put(instance.key(), new StubSubchannel(MusterNameResolver.group(instance)));
    }
    balancer.update(EndpointSet.of(1, instances));
    return new MusterPicker(balancer, ready);
  }

  /** The options of a retry attempt that must avoid {@code previous}, as {@link MusterRetryInterceptor} sets them. */
  public static CallOptions retryAvoiding(CallOptions options, InstanceKey previous) {
    return options.withOption(MusterRetryInterceptor.ATTEMPT, new MusterRetryInterceptor.Attempt(previous, false));
  }

  /** A subchannel that is never started or connected: the picker only hands it back. */
  private static final class StubSubchannel extends Subchannel {
    private final EquivalentAddressGroup group;

    StubSubchannel(EquivalentAddressGroup group) {
      this.group = group;
    }

    @Override
    public void shutdown() {}

    @Override
    public void requestConnection() {}

    @Override
    public List<EquivalentAddressGroup> getAllAddresses() {
      return List.of(group);
    }

    @Override
    public Attributes getAttributes() {
      return Attributes.EMPTY;
    }
  }
}
