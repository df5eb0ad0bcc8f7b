package dev.muster.bench;

import dev.muster.registry.Instance;
import dev.muster.registry.InstanceCodec;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Measures {@link InstanceCodec#decode} and {@link InstanceCodec#encode} of one typical registry value: the
 * SPEC §2 example (zone, region, one tag, one metadata entry, registeredAt; 173 bytes), in ns/op.
 *
 * <p>Why: every PUT a consumer applies is decoded once, on the cache's single loop thread, so decode time bounds
 * how many changed instances per second a cache can absorb; encode runs on every register and update. Decode
 * includes everything the codec does on a real value: the strict UTF-8 check, Jackson's streaming parse, the field
 * checks and the {@link Instance} validation (name and address rules).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DecodeBenchmark {
  private byte[] value;
  private Instance instance;

  @Setup
  public void setUp() {
    value = SpecExample.value();
    instance = SpecExample.instance();
    // A fixture check, not a figure check: encode must measure the same value that decode reads.
    if (!Arrays.equals(InstanceCodec.encode(instance), value)) {
      throw new IllegalStateException("encode no longer writes the SPEC example byte for byte: "
          + new String(InstanceCodec.encode(instance), StandardCharsets.UTF_8));
    }
  }

  @Benchmark
  public Instance decode() {
    return InstanceCodec.decode(SpecExample.KEY, value);
  }

  @Benchmark
  public byte[] encode() {
    return InstanceCodec.encode(instance);
  }
}
