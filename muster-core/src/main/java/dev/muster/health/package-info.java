/**
 * Health beyond the lease, on the consumer's side: active probes ({@link dev.muster.health.Prober} with HTTP, TCP
 * or a custom {@link dev.muster.health.Probe}), and the {@link dev.muster.health.HealthEvent}s that probes, panic
 * routing, slow start and bounded staleness report. Design: {@code docs/design-health.md}.
 */
package dev.muster.health;
