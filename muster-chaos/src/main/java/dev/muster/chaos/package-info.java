/**
 * {@code muster chaos}: seeded random fault schedules against private etcd processes, with Muster's caches and
 * registrars in this JVM, and the invariants of {@link dev.muster.chaos.QuietPoint} checked against etcd after
 * every step. {@link dev.muster.chaos.Chaos} runs a {@link dev.muster.chaos.ChaosConfig}.
 */
package dev.muster.chaos;
