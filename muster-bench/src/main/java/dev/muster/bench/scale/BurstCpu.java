package dev.muster.bench.scale;

import java.util.Locale;

/**
 * Where a burst's CPU went, from GO until every registration was visible and returned (/proc, polled every 50 ms,
 * so the window is up to 50 ms longer than the burst): etcd, the provider JVMs together, and the bench's own JVM
 * (its consumer cache among other things). On this machine's 2 cores, a sum near 2 × wall means CPU-bound.
 */
record BurstCpu(double wallSeconds, double etcd, double providers, double bench) {
  @Override
  public String toString() {
    return String.format(Locale.ROOT, "CPU over %.2f s: etcd %.2f s, provider JVMs %.2f s, bench JVM %.2f s"
        + " (%.2f of 2 cores)", wallSeconds, etcd, providers, bench, (etcd + providers + bench) / wallSeconds);
  }
}
