package dev.muster.bench;

import dev.muster.grpc.PickerFixture;
import dev.muster.grpc.echo.Echo;
import dev.muster.registry.Instance;
import io.grpc.CallOptions;
import io.grpc.LoadBalancer.PickResult;
import io.grpc.LoadBalancer.PickSubchannelArgs;
import io.grpc.LoadBalancer.SubchannelPicker;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.ArrayList;
import java.util.List;
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
 * <p>How: the picker the balancer would publish once every subchannel is READY, over the policy's default config
 * (weighted random, weights 1–100, one zone) and stub subchannels that never connect. The picker and the retry's
 * call option are package-private in muster-grpc, so muster-grpc's test jar builds them ({@link PickerFixture}, its
 * only class) and this benchmark calls the picker through grpc-java's public {@link SubchannelPicker}. The public
 * road alone (the policy's {@code LoadBalancer} fed resolved addresses) cannot get there: the policy takes only
 * addresses that carry the {@code muster:///} resolver's instance attribute, which is not public, and that resolver
 * delivers only from a live etcd.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class GrpcPickBenchmark {
  @Param({"10", "100", "10000"})
  int size;

  private SubchannelPicker picker;
  private PickSubchannelArgs first;
  private PickSubchannelArgs retry;

  @Setup
  public void fill() {
    List<Instance> instances = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      instances.add(Instance.of("echo", "10.0." + (i / 250) + "." + (i % 250 + 1), 8080).id("i" + i)
          .weight(1 + i % 100));
    }
    picker = PickerFixture.ready(instances);
    first = new Args(CallOptions.DEFAULT);
    retry = new Args(PickerFixture.retryAvoiding(CallOptions.DEFAULT, instances.get(0).key()));
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
}
