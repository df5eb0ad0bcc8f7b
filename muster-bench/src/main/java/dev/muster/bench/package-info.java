/**
 * JMH benchmarks for Muster. They print figures and never fail the build (STYLE.md rule 10): the build compiles
 * them into {@code target/muster-bench.jar}, and {@code muster-bench/run.sh} runs them.
 *
 * <ul>
 *   <li>{@link dev.muster.bench.ApplyBenchmark}: applying one revision to an endpoint view of 100 and of 10,000
 *       instances, to show whether applying costs O(changed) or O(set size).
 *   <li>{@link dev.muster.bench.DecodeBenchmark}: decoding and encoding one registry value (SPEC §2).
 *   <li>{@link dev.muster.bench.PickBenchmark}: {@code Balancer.pick()} for each policy over 10, 100 and 10,000
 *       endpoints, on one and two threads.
 * </ul>
 */
package dev.muster.bench;
