/** What the etcd and the Curator measurements share: the plan, samples, results, child JVMs, waits. */
package dev.muster.bench.support;
