package dev.muster.bench.memory;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MemoryBenchTest {
  @Test
  void aSetInMemoryCostsAFewHundredBytesAnInstanceAndTheTotalGrowsWithTheInstances() {
    double small = MemoryBench.setBytesPerInstance(10);
    double large = MemoryBench.setBytesPerInstance(1_000);

    assertThat(large).isBetween(100.0, 2_000.0); // an Instance record alone is 64 bytes, with no string
    assertThat(large * 1_000).isGreaterThan(small * 10 * 50);
    assertThat(small).isGreaterThanOrEqualTo(large); // the set's fixed part is spread over fewer instances
  }

  @Test
  void aBalancerEndpointCostsMoreThanNothingAndItsInstancesAreNotCounted() {
    Footprint empty = MemoryBench.balancerFootprint(dev.muster.cache.EndpointSet.EMPTY);
    Footprint full = MemoryBench.balancerFootprint(MemoryBench.setOf("test", 500));
    Footprint perEndpoints = full.minus(empty);

    assertThat(perEndpoints.bytes()).isGreaterThan(500L * 32);
    assertThat(perEndpoints.byClass()).doesNotContainKey("dev.muster.registry.Instance"); // the set's, shared
    assertThat(perEndpoints.byClass().get("dev.muster.balance.EndpointState").count()).isEqualTo(500);
  }
}
