/**
 * Micrometer meters of discovery itself (caches, balancers, probes, registrations), for applications that bind a
 * {@code MeterRegistry}; Micrometer is an optional dependency, needed only here.
 */
package dev.muster.metrics;
