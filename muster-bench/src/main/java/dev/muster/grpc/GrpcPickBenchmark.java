package dev.muster.grpc;

import dev.muster.balance.Balancer;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
import dev.muster.registry.InstanceKey;
import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.EquivalentAddressGroup;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.Subchannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import dev.muster.grpc.echo.Echo;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * Measures the {@code muster} gRPC policy's {@code MusterPicker.pickSubchannel} in ns/op over {@code size} READY
 * subchannels (10, 100, 10,000): a first attempt, and a retry attempt that must avoid the endpoint it went to before.
 *
 * <p>Why: the channel calls the picker on every RPC, on the caller's thread, so its cost and its allocation are the
 * policy's overhead per call on top of {@link dev.muster.balance.Balancer#pick()} (see PickBenchmark). Read
 * {@code gc.alloc.rate.norm}: it should be about 0 B/op at every size (the picker hands out one prebuilt
 * {@code PickResult} per READY endpoint, with its outcome tracer factory; it was 56 B/op when each pick built both),
 * and the time should grow with {@code size} no more than the balancer's own pick does.
 *
 * <p>How: the picker the balancer would publish once every subchannel is READY, built directly (this class sits in
 * package {@code dev.muster.grpc} because the policy's classes are package-private; nothing here is modular), over
 * the policy's default config (weighted random, weights 1–100, one zone) and stub subchannels that never connect.
 * Lives in the {@code dev.muster.grpc} package of muster-bench, a split package that works on the class path.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GrpcPickBenchmark {
  @Param({"10", "100", "10000"})
  int size;

  private MusterPicker picker;
  private PickSubchannelArgs first;
  private PickSubchannelArgs retry;

  @Setup
  public void fill() {
    MusterLoadBalancerProvider.Config config = MusterLoadBalancerProvider.Config.defaults();
    Balancer balancer = new Balancer(config.balancer(), new OutlierDetector(config.outlier(), System::nanoTime),
        System::nanoTime, ThreadLocalRandom::current, null);
    Instance[] instances = new Instance[size];
    Map<InstanceKey, Subchannel> ready = new HashMap<>();
    for (int i = 0; i < size; i++) {
      instances[i] = Instance.of("echo", "10.0." + (i / 250) + "." + (i % 250 + 1), 8080).id("i" + i)
          .weight(1 + i % 100);
      ready.put(instances[i].key(), new StubSubchannel(MusterNameResolver.group(instances[i])));
    }
    balancer.update(EndpointSet.of(1, List.of(instances)));
    picker = new MusterPicker(balancer, ready);
    first = new Args(CallOptions.DEFAULT);
    retry = new Args(CallOptions.DEFAULT.withOption(MusterRetryInterceptor.ATTEMPT,
        new MusterRetryInterceptor.Attempt(instances[0].key(), false)));
  }

  @Benchmark
  @Threads(1)
  public PickResult pickFirstAttempt() {
    return picker.pickSubchannel(first);
  }

  @Benchmark
  @Threads(1)
  public PickResult pickRetryAvoiding() {
    return picker.pickSubchannel(retry);
  }

  @Benchmark
  @Threads(2)
  public PickResult pickFirstAttemptTwoThreads() {
    return picker.pickSubchannel(first);
  }

  /** Fixed pick arguments: the picker reads only the call options. */
  private static final class Args extends PickSubchannelArgs {
    private final CallOptions options;
    private final Metadata headers = new Metadata();

    Args(CallOptions options) {
      this.options = options;
    }

    @Override
    public CallOptions getCallOptions() {
      return options;
    }

    @Override
    public Metadata getHeaders() {
      return headers;
    }

    @Override
    public MethodDescriptor<?, ?> getMethodDescriptor() {
      return Echo.SAY;
    }
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
