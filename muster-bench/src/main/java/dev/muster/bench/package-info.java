/**
 * JMH benchmarks for Muster. They print figures and never fail the build (STYLE.md rule 10): the build compiles
 * them into {@code target/muster-bench.jar}, and {@code muster-bench/run.sh} runs them.
 *
 * <ul>
 *   <li>{@link dev.muster.bench.ApplyBenchmark}: applying one revision to an endpoint view of 100 and of 10,000
 *       instances, to show whether applying costs O(changed) or O(set size).
 *   <li>{@link dev.muster.bench.DecodeBenchmark}: decoding and encoding one registry value (SPEC §2).
 * </ul>
 *
 * <p>PLACEHOLDER, not yet written: {@code pick()} benchmarks (10, 100 and 10,000 endpoints; 1 and 2 threads)
 * come with the balancer, which does not exist yet. They will show that picking takes no lock and does not
 * grow with the endpoint count. Until then there is deliberately no pick benchmark here, not even a stub.
 */
package dev.muster.bench;
