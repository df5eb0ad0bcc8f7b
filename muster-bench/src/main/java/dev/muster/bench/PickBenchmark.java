package dev.muster.bench;

import dev.muster.balance.Balancer;
import dev.muster.balance.BalancerConfig;
import dev.muster.balance.EndpointState;
import dev.muster.cache.EndpointSet;
import dev.muster.outlier.OutlierConfig;
import dev.muster.outlier.OutlierDetector;
import dev.muster.registry.Instance;
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
 * Measures {@link Balancer#pick()} in ns/op for each policy over {@code size} endpoints (10, 100, 10,000), on one
 * thread and on two threads sharing one balancer.
 *
 * <p>Why: SPEC §5 says picks are lock-free reads of an immutable picker with no allocation on the hot path. Read
 * {@code gc.alloc.rate.norm} (run with {@code -prof gc}): it should be about 0 B/op for every policy and size;
 * and the time should barely grow with {@code size} (round robin, power-of-two and weighted random (an alias table)
 * are all O(1)). The two-thread variants show whether picking contends (it should not: the only
 * shared write is round robin's counter).
 *
 * <p>How: one balancer per trial, filled once with {@code size} instances of weights 1–100 in one zone, ejection
 * off; the benchmark only picks (no attempt is started, so in-flight counts stay 0 and power-of-two compares
 * latency-free scores).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PickBenchmark {
  @Param({"10", "100", "10000"})
  int size;

  @Param({"ROUND_ROBIN", "WEIGHTED_RANDOM", "POWER_OF_TWO"})
  BalancerConfig.Policy policy;

  private Balancer balancer;

  @Setup
  public void fill() {
    OutlierDetector detector = new OutlierDetector(OutlierConfig.defaults().toBuilder().enabled(false).build(),
        System::nanoTime);
    balancer = Balancer.create(BalancerConfig.defaults().toBuilder().policy(policy).build(), detector, removed -> { });
    List<Instance> instances = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      instances.add(Instance.of("bench", "10.0." + (i / 250) + "." + (i % 250 + 1), 8080).id("i" + i)
          .weight(1 + i % 100));
    }
    balancer.update(EndpointSet.of(1, instances));
  }

  @Benchmark
  @Threads(1)
  public EndpointState pickOneThread() {
    return balancer.pick();
  }

  @Benchmark
  @Threads(2)
  public EndpointState pickTwoThreads() {
    return balancer.pick();
  }
}
