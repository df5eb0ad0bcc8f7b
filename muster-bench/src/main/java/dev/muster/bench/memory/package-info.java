/**
 * The bench's memory section (issue 19 §6): bytes per cached instance, per cache, per registration and per balancer
 * endpoint, measured on live objects with JOL ({@link dev.muster.bench.memory.Footprint}) and with the heap after
 * full collections, each figure printed with what it counts. {@link dev.muster.bench.memory.MemoryBench} is the
 * entry point.
 */
package dev.muster.bench.memory;
